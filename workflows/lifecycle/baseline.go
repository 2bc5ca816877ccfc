package lifecycle

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
)

// Baseline covers every change the lifecycle made before it: a booking
// started since records one marker where it recorded up to three at its
// start and one more at each first cancel, move, reminder after a move or
// no-show, and it publishes nothing its start's search attributes
// already say (workflows.Baseline, docs/deploy.md "Baselines").
var Baseline = workflows.Baseline{
	ID: "booking-baseline",
	Sets: map[workflow.Version]map[string]workflow.Version{
		1: {
			versionReschedule:                    1,
			versionPublishBookedFirst:            1,
			versionShopCalendar:                  1,
			versionCancellingAtOnce:              1,
			versionCancelAfterMoveReview:         1,
			versionRefundInFull:                  1,
			versionPublishBeforeTelling:          1,
			versionNoShow:                        1,
			versionRemindAfterMove:               1,
			versionMoveOutlastsOutage:            1,
			workflows.VersionDurableCompensation: 1,
		},
	},
}
