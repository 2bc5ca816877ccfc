package workflows_test

// A reset workflow runs under a new run ID, so every key after the reset
// point is new; the business reference finds its hold and authorisation
// (failure-matrix item 10).

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// reset resets the run to the workflow task that completed at eventID and
// returns the new run: a new run ID, so every activity after that point
// derives new keys.
func (e env) reset(t *testing.T, r client.WorkflowRun, eventID int64) client.WorkflowRun {
	t.Helper()
	resp, err := e.tc.ResetWorkflowExecution(context.Background(), &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 "default",
		WorkflowExecution:         workflowExecution(r),
		Reason:                    "test: run the saga again under a new run ID",
		WorkflowTaskFinishEventId: eventID,
		RequestId:                 r.GetRunID() + "-reset",
	})
	require.NoError(t, err)
	require.NotEqual(t, r.GetRunID(), resp.GetRunId())
	return e.tc.GetWorkflow(context.Background(), r.GetID(), resp.GetRunId())
}

// TestMatrix10ResetAfterHoldAndAuthorisation proves failure-matrix item 10
// (a workflow is reset mid-saga after its hold and its authorisation): the
// saga is stopped on its way to the calendar's confirm, then reset to the
// workflow task that handled the payment saga's authorisation report. The
// new run confirms under new keys while the old run's confirm is still in
// flight; both land. Downstream: one reservation confirmed by two keys, one
// payment intent captured once, one confirmation row.
func TestMatrix10ResetAfterHoldAndAuthorisation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	pause := e.calendar.PauseAt("POST", "/v1/holds/", false) // the confirm, not the hold
	var release sync.Once
	t.Cleanup(func() { release.Do(pause.Release) })
	req := request(t, "+4915112345678", time.Friday, 15)
	// The paused confirm must not time out and retry before the reset.
	req.Tuning.ActivityTimeout = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := e.startUntil(ctx, t, req, pause, "the confirm")
	before := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"held": 1}, before.Reservations, "held before the reset")
	require.Equal(t, map[string]int{"requires_capture": 1}, before.Intents, "authorised before the reset")

	reset := e.reset(t, r, taskCompletedAfterAuthorisation(t, e.tc, r))
	var st appointment.State
	require.NoError(t, reset.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, deposit.Captured, st.Payment)
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))

	// The old run's confirm, held until now, reaches the calendar too.
	release.Do(pause.Release)
	var keys, bookings int
	testsupport.Eventually(t, 30*time.Second, "both runs' confirms answered", func() bool {
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT resource_id) FROM idempotency_keys
			WHERE operation = $1 AND state = 'completed'`, calendar.OpConfirmHold).Scan(&keys, &bookings))
		return keys == 2
	})
	require.Equal(t, 1, bookings, "two keys, one booking")
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))
}
