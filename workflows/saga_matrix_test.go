package workflows_test

// Failure-matrix tests of issue #11 for the sagas: compensations outlast
// an outage (12), a new key only where absence is provable (14), a cancel
// before commit is honoured (15), a closed intent is not merged into (18).

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// shortSteps is a step retry budget of about a second: three attempts.
var shortSteps = workflows.Tuning{
	ActivityAttempts: 3, MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 3 * time.Second,
	CompensationMaxInterval: 200 * time.Millisecond,
}

// endWhen waits until the workflow has ended or cond holds, whichever is
// first.
func endWhen(t *testing.T, r client.WorkflowRun, what string, cond func() bool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = r.Get(context.Background(), nil)
		close(done)
	}()
	testsupport.Eventually(t, 90*time.Second, what+" (or the workflow ended)", func() bool {
		select {
		case <-done:
			return true
		default:
			return cond()
		}
	})
}

func result(t *testing.T, r client.WorkflowRun) workflows.BookingState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var st workflows.BookingState
	require.NoError(t, r.Get(ctx, &st))
	return st
}

func postSuffix(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, suffix)
	}
}

// reviewCases counts the review cases of a workflow by reason.
func (e env) reviewCases(t *testing.T, workflowID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	rows, err := e.pool.Query(context.Background(), `SELECT reason, count(*) FROM review_cases WHERE workflow_id LIKE '%' || $1 GROUP BY reason`, workflowID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var reason string
		var n int
		require.NoError(t, rows.Scan(&reason, &n))
		out[reason] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// TestMatrix12CompensationOutlastsOutage: the payment API goes down just
// as a void (the holds expired, the booking is rejected) or a refund (the
// capture committed, its answer was lost) is due, and stays down for six
// times the step retry budget. The compensation keeps retrying with its
// key; once the API is back there is exactly one void or one refund.
func TestMatrix12CompensationOutlastsOutage(t *testing.T) {
	cases := []struct {
		name        string
		tweak       func(*config.Config)
		downAt      func(*http.Request) bool
		afterCommit bool
		status      workflows.BookingStatus
		intents     map[string]int
		refunds     int
	}{
		{"void after the holds expired", func(c *config.Config) { c.HoldTTL = time.Millisecond },
			postSuffix("/cancel"), false, workflows.StatusRejected, map[string]int{"canceled": 1}, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.tweak)
			outage := testsupport.NewOutage(t, e.payments.URL)
			outage.DownAt(tc.downAt, tc.afterCommit)
			e.cfg.PaymentsURL = outage.URL
			e.startWorker(t)
			req := request(t, fmt.Sprintf("+491511234560%d", i), time.Monday, 11)
			req.Tuning = shortSteps
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
			require.NoError(t, err)
			<-outage.WentDown()
			// Longer than the budgets of every step and undo that may run
			// into it (capture, its reconciliation, both sagas' voids).
			budget := 6 * int(shortSteps.ActivityAttempts)
			endWhen(t, r, "the outage outlasting six step budgets", func() bool { return outage.Refused() >= budget })
			outage.Up()
			st := result(t, r)

			testsupport.Eventually(t, 30*time.Second, "the compensation to land", func() bool {
				got := e.effects(t, r.GetID())
				return got.Intents["requires_capture"] == 0 && got.Refunds == tc.refunds
			})
			got := e.effects(t, r.GetID())
			require.Equal(t, tc.intents, got.Intents, "one intent, voided or captured")
			require.Equal(t, tc.refunds, got.Refunds, "exactly one refund where money was captured")
			require.Zero(t, got.Reservations["held"]+got.Reservations["confirmed"], "no active reservation")
			require.Zero(t, got.Messages)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Empty(t, e.reviewCases(t, r.GetID()), "the compensations completed: nobody needs to act")
			require.GreaterOrEqual(t, outage.Refused(), budget, "the outage outlasted the step retry budget")
		})
	}
}

// TestCaptureOutlastsOutageAndTheBookingStands: the capture commits, its
// answer is lost and the payment API stays down longer than a step's retry
// budget. The capture is the booking's commit step, so it retries with its
// key until the API is back (the replay answers "captured") instead of
// turning a confirmed booking into a refunded, cancelled one.
func TestCaptureOutlastsOutageAndTheBookingStands(t *testing.T) {
	e := newEnv(t)
	outage := testsupport.NewOutage(t, e.payments.URL)
	outage.DownAt(postSuffix("/capture"), true)
	e.cfg.PaymentsURL = outage.URL
	e.startWorker(t)
	req := request(t, "+4915112345699", time.Tuesday, 11)
	req.Tuning = shortSteps
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	<-outage.WentDown()
	budget := 3 * int(shortSteps.ActivityAttempts)
	endWhen(t, r, "the outage outlasting three step budgets", func() bool { return outage.Refused() >= budget })
	outage.Up()
	st := result(t, r)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 1},
		e.effects(t, r.GetID()), "one booking, captured once, no refund, one confirmation")
	require.GreaterOrEqual(t, outage.Refused(), budget, "the outage outlasted the step retry budget")
}

// TestMatrix15CancelDuringConfirmIsHonoured: the customer cancels while
// the calendar confirms the hold, or while the deposit is captured (the
// downstream request is held at a proxy until the signal was sent). The
// booking is undone: no active reservation, the deposit voided or
// refunded, no confirmation.
func TestMatrix15CancelDuringConfirmIsHonoured(t *testing.T) {
	cases := []struct {
		name    string
		pause   func(e env) *testsupport.Pause
		intents map[string]int
		refunds int
	}{
		{"during confirm", func(e env) *testsupport.Pause { return e.calendar.PauseAt("POST", "/v1/holds/", false) },
			map[string]int{"canceled": 1}, 0},
		{"during capture", func(e env) *testsupport.Pause { return e.payments.PauseAt("POST", "/v1/payment_intents/", false) },
			map[string]int{"succeeded": 1}, 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.startWorker(t)
			pause := tc.pause(e)
			req := request(t, fmt.Sprintf("+491511234561%d", i), time.Tuesday, 15)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r := e.startUntil(ctx, t, req, pause, tc.name)
			require.NoError(t, e.tc.SignalWorkflow(ctx, r.GetID(), "", workflows.SignalCancel, nil))
			pause.Release()
			st := result(t, r)
			require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
			testsupport.Eventually(t, 30*time.Second, "the deposit voided or refunded", func() bool {
				got := e.effects(t, r.GetID())
				return got.Intents["requires_capture"] == 0 && got.Refunds == tc.refunds
			})
			got := e.effects(t, r.GetID())
			require.Zero(t, got.Reservations["held"]+got.Reservations["confirmed"], "no active reservation: %v", got.Reservations)
			require.Equal(t, tc.intents, got.Intents)
			require.Equal(t, tc.refunds, got.Refunds)
			require.Zero(t, got.Messages, "no confirmation")
		})
	}
}
