package lifecycle_test

// Failure-matrix cases of the booking's lifecycle: a cancel at either
// side of the refund boundary, and a reminder whose answer is lost after
// its outbox row was reserved.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestMatrixCancelRacingTheRefundBoundary: a cancel one second inside the
// 24 h window refunds the deposit once, one second past it keeps the
// deposit; either answer tells the customer which side it fell on.
func TestMatrixCancelRacingTheRefundBoundary(t *testing.T) {
	cases := []struct {
		name string
		// from is how long before the slot (72 h after the start) the
		// cancel arrives.
		from    time.Duration
		deposit lifecycle.DepositOutcome
		refunds int
		reason  string
	}{
		{"one second before the boundary: refunded", 24*time.Hour + time.Second, lifecycle.DepositRefunded, 1,
			"cancelled at least 24h0m0s before the slot: deposit refunded in full"},
		{"one second after the boundary: kept", 24*time.Hour - time.Second, lifecycle.DepositKept, 0,
			"cancelled less than 24h0m0s before the slot: deposit kept"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			in := lifecycleInput(env)
			in.Reminders = []time.Duration{2 * time.Hour} // none near the boundary
			var got answer
			updateAt(env, lifecycle.UpdateCancel, 72*time.Hour-tc.from, "cancel-1", lifecycle.CancelRequest{Reason: "customer asked"}, &got)
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			require.True(t, got.done)
			require.NoError(t, got.rejected)
			require.NoError(t, got.err)
			require.Equal(t, workflows.StatusCancelled, got.state.Status)
			require.Equal(t, tc.deposit, got.state.Deposit)
			require.Equal(t, tc.reason, got.state.Reason, "the answer says which side of the window the cancel fell on")
			require.Equal(t, tc.refunds, f.refunds, "refunds at the payment API")
			require.Len(t, f.messages, 1, "one cancellation message")
		})
	}
}

// TestMatrixReminderAnswerLost: the reminder's activity reserves its
// outbox row (the real outbox in PostgreSQL), then its answer is lost
// and it is retried: one outbox row for that offset, one reminder at the
// customer (counted at the fake Twilio, where a double send would show),
// and the booking records the reminder as sent.
func TestMatrixReminderAnswerLost(t *testing.T) {
	pool := testsupport.Database(t)
	env := workflowtest.NewEnv(t)
	lifecycle.Register(env)
	a := &activities.Activities{Messages: activities.OutboxMessenger{Store: &outbox.Store{Pool: pool}}}
	env.RegisterActivity(a)
	cfg := testsupport.Config(t)
	fake := stacktest.TwilioRelay(t, cfg, pool, stack.Logger(cfg, testsupport.LogWriter(t)), 100*time.Millisecond)
	ref := appointment.WorkflowID("demo", testsupport.TaskQueue(t))
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: lifecycle.WorkflowID(ref), TaskQueue: workflows.TaskQueue})
	// In the relay's (real) future: a reminder reached after its slot
	// would be recorded as expired, not sent.
	env.SetStartTime(time.Date(2030, 6, 3, 10, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	attempts := 0
	env.OnActivity(a.SendConfirmation, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.ConfirmationInput) (activities.Step, error) {
			step, err := a.SendConfirmation(ctx, in) // the real reservation
			mu.Lock()
			defer mu.Unlock()
			if attempts++; attempts == 1 && err == nil {
				return activities.Step{}, errors.New("connection reset: the answer is lost")
			}
			return step, err
		})
	in := lifecycleInput(env)
	in.Reference, in.Reminders = ref, []time.Duration{2 * time.Hour}
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	var st lifecycle.State
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, workflows.StatusCompleted, st.Status)
	require.Equal(t, []string{"2h0m0s"}, st.Reminders)
	require.Equal(t, 2, attempts, "the send was retried")

	var rows int
	var id string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*), min(id) FROM outbox_messages
		WHERE reference = $1 AND kind = $2`, ref, lifecycle.MessageKindReminder+"2h0m0s").Scan(&rows, &id))
	require.Equal(t, 1, rows, "one outbox row for the offset")
	require.Equal(t, id, st.Steps[len(st.Steps)-1].DownstreamID, "the retry answered the row the lost attempt reserved")
	require.Len(t, testsupport.Delivered(t, pool, fake, ref, in.Customer, "Erinnerung"), 1, "one reminder reached the customer")
}
