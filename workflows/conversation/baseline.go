package conversation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
)

// Baseline covers every change the conversation made before it: a run
// started since (a new customer's, or one that continued as new)
// records one marker where it recorded three at its start and one more
// at each first change, wish or review it handles, and it publishes a
// review status only when it changes (workflows.Baseline, docs/deploy.md
// "Baselines").
var Baseline = workflows.Baseline{
	ID: "conversation-baseline",
	Sets: map[workflow.Version]map[string]workflow.Version{
		1: {
			versionChangesOutlastOutage:           1,
			versionBookingChanges:                 1,
			versionWishMeansEarlierBookings:       1,
			versionCancelAgainAfterItEnded:        1,
			versionCancelledUnconfirmedIsAnswered: 1,
			versionCancellingIsUnderWay:           1,
			versionConsentKeywords:                1,
			versionKeyedIntentID:                  1,
			versionWishOutlastsOutage:             1,
			versionDedupFailureReviewed:           1,
			versionStartFailureReviewed:           1,
			versionHandOver:                       1,
			versionChangeAwaitsLifecycle:          1,
			versionMoveAwaitsConfirming:           1,
			versionDrainAllSignals:                1,
			versionCancelWish:                     1,
			versionLocalReads:                     1,
			workflows.VersionCustomerKey:          1,
		},
	},
}
