package appointment

import (
	"maps"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// Baseline covers every change the appointment made before it: a booking
// started since records one marker where a confirmed one recorded six,
// and it publishes only what changes what its search attributes say
// (Requested and the customer are the start's; Held lasts one workflow
// task), so five upserts where there were twelve (workflows.Baseline,
// docs/deploy.md "Baselines").
var Baseline = workflows.Baseline{
	ID: "appointment-baseline",
	Sets: map[workflow.Version]map[string]workflow.Version{
		1: baselineV1,
		// 1, and the card deposit as the appointment's own steps.
		2: extend(baselineV1, map[string]workflow.Version{
			versionCardInline:                        1,
			deposit.VersionNewKeyOnlyIfAuthoritative: 1,
		}),
	},
}

var baselineV1 = map[string]workflow.Version{
	changeAlreadyBooked:                  1,
	versionOfferAlternatives:             1,
	versionTellLinkUnavailable:           1,
	versionDecisionOutlastsConfirm:       1,
	versionCancelUntilCommit:             1,
	versionCloseIntentLands:              1,
	versionPublishCancelling:             1,
	versionForwardLateCancel:             1,
	versionForwardRefunds:                1,
	versionWithdrawConfirmation:          1,
	versionTellNotBooked:                 1,
	versionBookingLifecycle:              1,
	versionHoldReconcileOutlastsOutage:   1,
	versionConfirmOutlastsOutage:         1,
	versionLinkNeverMade:                 1,
	versionPaymentSignalAfterReset:       1,
	deposit.VersionPaymentLink:           1,
	deposit.VersionVoidUnpaidLink:        1,
	deposit.VersionVoidKnownIntent:       1,
	workflows.VersionCustomerKey:         1,
	workflows.VersionDurableCompensation: 1,
}

// extend is a baseline's set with more changes: each version keeps every
// change of the one before.
func extend(set, more map[string]workflow.Version) map[string]workflow.Version {
	out := maps.Clone(set)
	maps.Copy(out, more)
	return out
}
