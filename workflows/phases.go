package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// ObservePhase records on bookonce_booking_phase_seconds that phase p of a
// booking whose webhook was accepted at since has ended now, in workflow
// time (the start of the workflow task that sees the phase's end: the
// time includes the task's wait in the queue, as the customer's does).
//
// It runs outside replay only, so a history replayed after a cache
// eviction or a worker restart records nothing a second time, and it
// creates no command: runs recorded before it replay unchanged and need no
// version. A zero since (no webhook behind the booking) records nothing.
func ObservePhase(ctx workflow.Context, tenant string, p telemetry.Phase, since time.Time) {
	if since.IsZero() || workflow.IsReplaying(ctx) {
		return
	}
	telemetry.ObservePhase(telemetry.BookingPhases, tenant, p, since, workflow.Now(ctx))
}
