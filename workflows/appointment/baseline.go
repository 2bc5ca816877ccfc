package appointment

import (
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
		1: {
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
		},
	},
}
