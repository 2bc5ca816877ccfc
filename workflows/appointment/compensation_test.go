package appointment_test

// Unit tests (time skipping) of defects 1 and 4 of issue #11: a
// compensation outlives the step retry budget, a final compensation
// failure is handed to a person, a cancel after commit is not dropped.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// reviewReasons lists the reasons of the review cases opened (any order).
func reviewReasons(f *unitFake) []review.Reason {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []review.Reason
	for _, v := range f.Inputs() {
		if in, ok := v.(activities.ReviewInput); ok {
			out = append(out, in.Reason)
		}
	}
	return out
}

// TestUnitCompensationRetriesBeyondActivityAttempts: the payment API is
// unreachable for three times the step's attempts while the deposit must
// be voided; the void keeps retrying (same key) and lands, the booking
// ends as the step decided (Rejected), no person is needed.
func TestUnitCompensationRetriesBeyondActivityAttempts(t *testing.T) {
	env, f := newUnitEnv(t)
	req := unitRequest()
	req.Tuning = workflows.Tuning{ActivityAttempts: 3, CompensationMaxInterval: time.Minute}
	f.confirmHold = func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
		return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeCalendarFinal)
	}
	const outage = 9 // attempts refused: three times the step budget
	f.Void = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
		if activity.GetInfo(ctx).Attempt <= outage {
			return activities.IntentResult{}, errors.New("dial tcp 127.0.0.1:8082: connection refused")
		}
		return activities.IntentResult{}, nil
	}
	env.ExecuteWorkflow(appointment.WorkflowName, req)
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusRejected, st.Status, st.Reason)
	require.Empty(t, st.ReviewCase)
	voids := len(f.Started("VoidDeposit"))
	require.Greater(t, voids, int(req.Tuning.ActivityAttempts), "the void outlived the step retry budget")
	require.Equal(t, outage+1, voids, "retried until it landed, then stopped")
	require.False(t, f.Live(), "the authorisation was voided")
	require.Empty(t, reviewReasons(f))
}

// TestUnitFinalCompensationFailureOpensReview: the payment API refuses the
// void for good; the booking does not end as Rejected with a suffix but as
// NeedsReview with a compensation_failed case.
func TestUnitFinalCompensationFailureOpensReview(t *testing.T) {
	env, f := newUnitEnv(t)
	f.confirmHold = func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
		return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeCalendarFinal)
	}
	f.Void = func(context.Context, activities.IntentInput) (activities.IntentResult, error) {
		return activities.IntentResult{}, unitFinalErr(activities.ErrTypePaymentFinal)
	}
	env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusNeedsReview, st.Status, st.Reason)
	require.NotEmpty(t, st.ReviewCase)
	require.Contains(t, st.Reason, "compensation failed")
	require.Equal(t, []review.Reason{review.ReasonCompensationFailed}, reviewReasons(f), "one failed void, one case")
}

// TestUnitCancelWhileSendingConfirmationGoesToTheLifecycle: a cancel
// that lands after the commit (while the confirmation is sent) is carried
// out by the booking's lifecycle: one cancel Update, on the condition
// that it refunds, under an ID derived from the appointment; no review
// case, and the saga itself cancels nothing behind the lifecycle's back.
func TestUnitCancelWhileSendingConfirmationGoesToTheLifecycle(t *testing.T) {
	env, f := newUnitEnv(t)
	f.delays["SendConfirmation"] = 10 * time.Second
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalCancel, nil) }, 5*time.Second)
	env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Empty(t, st.ReviewCase)
	require.Empty(t, reviewReasons(f))
	calls := f.Started("ChangeBooking")
	require.Len(t, calls, 1)
	in := f.Input(calls[0].Saga, calls[0].ID).(activities.ChangeBookingInput)
	require.Equal(t, lifecycle.UpdateCancel, in.Update)
	require.Equal(t, lifecycle.CancelUpdateID("demo", "appointment:"+st.Reference), in.UpdateID)
	require.JSONEq(t, `{"reason":"asked by the customer while the booking was being confirmed","refund_in_full":true}`, string(in.Args))
	require.Empty(t, f.Started("CancelBooking"), "the lifecycle cancels, not the saga")
}

// TestUnitConfirmOutlastsACalendarOutage: the calendar answers "retry with
// the same key" (its database is down) for three times the step's
// attempts while a paid hold is confirmed; the confirm keeps retrying
// under its key and lands: booked and captured, not released with the
// customer's deposit voided (before: "confirmation outcome unknown").
func TestUnitConfirmOutlastsACalendarOutage(t *testing.T) {
	env, f := newUnitEnv(t)
	req := unitRequest()
	req.Tuning = workflows.Tuning{ActivityAttempts: 3, CompensationMaxInterval: time.Minute}
	const outage = 9 // attempts refused: three times the step budget
	confirms := 0
	f.confirmHold = refuseConfirm(outage, func(context.Context) { confirms++ })
	env.ExecuteWorkflow(appointment.WorkflowName, req)
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, outage+1, confirms, "retried under its key until it landed, then stopped")
	require.Empty(t, f.Started("VoidDeposit"), "the deposit was not voided")
	require.Empty(t, reviewReasons(f))
}

// TestUnitHoldReconcileOutlastsACalendarOutage: a hold whose answer was
// lost while the calendar's database failed over is settled by a lookup
// that asks until the calendar answers, then held again; before, the
// lookup had the step's budget and every such booking went to a person.
func TestUnitHoldReconcileOutlastsACalendarOutage(t *testing.T) {
	env, f := newUnitEnv(t)
	req := unitRequest()
	req.Tuning = workflows.Tuning{ActivityAttempts: 3, CompensationMaxInterval: time.Minute}
	const outage = 9 // lookups refused: three times the step budget
	f.holdSlot = func(ctx context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
		if activity.GetInfo(ctx).ActivityID == "hold-slot" {
			return activities.HoldSlotResult{}, errors.New("calendar hold slot: 503 internal: idempotency store unavailable; retry with the same key")
		}
		return activities.HoldSlotResult{Step: workflowtest.Step(ctx, "hold-2"), Hold: calendar.Hold{ID: "hold-2", Status: calendar.HoldHeld, Reference: in.Reference}}, nil
	}
	lookups := 0
	f.findHold = func(ctx context.Context, _ activities.FindHoldInput) (activities.FindHoldResult, error) {
		lookups++
		if activity.GetInfo(ctx).Attempt <= outage {
			return activities.FindHoldResult{}, errors.New("calendar find hold: 503 internal: database unavailable")
		}
		return activities.FindHoldResult{}, nil // the calendar proves nothing was held
	}
	env.ExecuteWorkflow(appointment.WorkflowName, req)
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, "hold-2", st.HoldID)
	require.Equal(t, outage+1, lookups, "asked under one key until the calendar answered")
	require.Equal(t, []string{"HoldSlot hold-slot", "FindHold find-hold-slot", "HoldSlot hold-slot-2",
		"AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "CaptureDeposit capture-deposit", "SendConfirmation send-confirmation"}, f.Executions("appointment"))
	require.Empty(t, reviewReasons(f))
}

// TestUnitConfirmOutlastsThePaymentDecisionBound: the calendar refuses the
// confirmation for longer than the payment saga used to wait for the
// appointment's decision (30 minutes): each attempt hangs five minutes,
// then fails. The saga waits as long as the appointment may still
// confirm (the derived bound), or, past a shorter bound the worker sets
// (PAYMENT_DECISION_TIMEOUT, which the chaos drill shortens), as long as
// the appointment still runs: the booking lands, the deposit is captured,
// nothing is voided or cancelled. Before, the saga voided on its own at
// its bound, the capture signal found it ended, and the compensation
// cancelled the confirmed booking without telling anyone. A payment link
// has such a saga; a card deposit, the appointment's own steps, waits
// with it (the card cases).
func TestUnitConfirmOutlastsThePaymentDecisionBound(t *testing.T) {
	cases := []struct {
		name  string
		link  bool
		terms *tenants.Terms
	}{
		{name: "link: the derived bound", link: true},
		{name: "link: a worker's bound shorter than the outage", link: true, terms: &tenants.Terms{DecisionTimeout: 10 * time.Minute}},
		{name: "card: the derived bound"},
		{name: "card: a worker's bound shorter than the outage", terms: &tenants.Terms{DecisionTimeout: 10 * time.Minute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			req := unitRequest()
			if tc.link {
				env, f = newUnitLinkEnv(t)
				req = unitLinkRequest()
				env.RegisterDelayedCallback(func() {
					f.pay()
					relay(t, env, deposit.EventCheckoutCompleted)
				}, 5*time.Minute)
			}
			req.Terms = tc.terms
			req.Tuning = workflows.Tuning{ActivityAttempts: 3, CompensationMaxInterval: time.Minute, ActivityTimeout: 10 * time.Minute}
			f.delays["ConfirmHold"] = 5 * time.Minute // the calendar hangs, then refuses
			const outage = 9                          // attempts refused: 45 minutes
			var first, last time.Time
			f.confirmHold = refuseConfirm(outage, func(context.Context) {
				if first.IsZero() {
					first = env.Now()
				}
				last = env.Now()
			})
			env.ExecuteWorkflow(appointment.WorkflowName, req)
			st := unitResult(t, env)
			require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
			require.Greater(t, last.Sub(first), 30*time.Minute, "the outage outlasts the old decision bound")
			require.Len(t, f.Started("CaptureDeposit"), 1, "the deposit is captured")
			require.Empty(t, f.Started("VoidDeposit"), "the payment saga did not void on its own")
			require.Empty(t, f.Started("CancelBooking"), "the confirmed booking stands")
			require.Empty(t, reviewReasons(f))
		})
	}
}

// refuseConfirm is a calendar whose database is down for the first outage
// attempts of a confirmation ("retry with the same key"), then books;
// seen is called at every attempt.
func refuseConfirm(outage int32, seen func(context.Context)) func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
	return func(ctx context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
		seen(ctx)
		if activity.GetInfo(ctx).Attempt <= outage {
			return activities.ConfirmHoldResult{}, errors.New("calendar confirm hold: 503 internal: idempotency store unavailable; retry with the same key")
		}
		return activities.ConfirmHoldResult{Step: workflowtest.Step(ctx, "bk_1"), Booking: calendar.Booking{ID: "bk_1", HoldID: in.HoldID}}, nil
	}
}
