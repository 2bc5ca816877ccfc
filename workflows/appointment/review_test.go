package appointment_test

// Unit tests of the sagas' unknown outcomes: reconciled by reference, or
// handed to a person through a review case whose decision (retry, abandon,
// or none in time) the saga then follows.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
)

// unitUnknownHold makes every hold attempt end with a retryable error (an
// unknown outcome) until ok returns true for the activity ID.
func unitUnknownHold(f *unitFake, ok func(activityID string) bool) {
	f.holdSlot = func(ctx context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
		id := activity.GetInfo(ctx).ActivityID
		if ok != nil && ok(id) {
			return activities.HoldSlotResult{Step: workflowtest.Step(ctx, "hold-"+id), Hold: calendar.Hold{ID: "hold-" + id, Status: calendar.HoldHeld, Reference: in.Reference}}, nil
		}
		return activities.HoldSlotResult{}, errors.New("timeout")
	}
	// The first lookup answers "nothing there", the second cannot answer.
	f.findHold = func(ctx context.Context, _ activities.FindHoldInput) (activities.FindHoldResult, error) {
		if activity.GetInfo(ctx).ActivityID == "find-hold-slot" {
			return activities.FindHoldResult{}, nil
		}
		return activities.FindHoldResult{}, errors.New("calendar unreachable")
	}
}

var unitUnknownTuning = workflows.Tuning{ActivityAttempts: 1, ReviewTimeout: 6 * time.Hour, ReconcileTimeout: 10 * time.Second}

// unitUnknownUntilReview is the activity sequence of a hold whose outcome stays
// unknown: reconciled (nothing found), tried once more, reconciliation
// fails, a review case is opened.
var unitUnknownUntilReview = []string{
	"HoldSlot hold-slot", "FindHold find-hold-slot", "HoldSlot hold-slot-2", "FindHold find-hold-slot-2",
	"OpenReviewCase open-review-hold-slot-2",
}

func TestUnitUnknownHoldOutcome(t *testing.T) {
	t.Run("reconciled: the lost hold is found and used", func(t *testing.T) {
		env, f := newUnitEnv(t)
		unitUnknownHold(f, nil)
		f.findHold = func(_ context.Context, in activities.FindHoldInput) (activities.FindHoldResult, error) {
			return activities.FindHoldResult{Found: true, Hold: calendar.Hold{ID: "hold-lost", Status: calendar.HoldHeld, Reference: in.Reference}}, nil
		}
		req := unitRequest()
		req.Tuning = unitUnknownTuning
		env.ExecuteWorkflow(appointment.WorkflowName, req)
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Equal(t, "hold-lost", st.HoldID)
		require.Equal(t, []string{"HoldSlot hold-slot", "FindHold find-hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "CaptureDeposit capture-deposit", "SendConfirmation send-confirmation"}, f.Sequence("appointment"))
		require.Equal(t, activities.FindHoldInput{Tenant: "demo", Reference: unitWorkflowID}, f.Input("appointment", "find-hold-slot"))
	})

	cases := []struct {
		name string
		// decide runs while the saga waits for review; nil sends nothing.
		decide   func(env *testsuite.TestWorkflowEnvironment, caseID string)
		holdOK   func(activityID string) bool
		status   workflows.BookingStatus
		reason   string
		after    []string // appointment activities after the review case opened
		minWait  time.Duration
		maxWait  time.Duration
		wantHold string
	}{
		{
			name: "abandon decision",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionAbandon})
			},
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			minWait: time.Hour, maxWait: 2 * time.Hour,
		},
		{
			name: "a decision for another case is ignored, then abandon",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: "rc_someotherone", Action: review.ActionRetry})
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionAbandon})
			},
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			minWait: time.Hour, maxWait: 2 * time.Hour,
		},
		{
			name:   "review timeout abandons",
			decide: nil,
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			minWait: unitUnknownTuning.ReviewTimeout, maxWait: unitUnknownTuning.ReviewTimeout + time.Minute,
		},
		{
			name: "retry decision holds again and books",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionRetry})
			},
			holdOK:  func(id string) bool { return id == "hold-slot-3" },
			status:  workflows.StatusConfirmed,
			after:   []string{"HoldSlot hold-slot-3", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "CaptureDeposit capture-deposit", "SendConfirmation send-confirmation"},
			minWait: time.Hour, maxWait: 2 * time.Hour, wantHold: "hold-hold-slot-3",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			unitUnknownHold(f, tc.holdOK)
			req := unitRequest()
			req.Tuning = unitUnknownTuning
			start := env.Now()
			var during appointment.State
			var qerr error
			env.RegisterDelayedCallback(func() {
				during, qerr = unitQuery(env)
				if tc.decide != nil && qerr == nil {
					tc.decide(env, during.ReviewCase)
				}
			}, time.Hour)
			env.ExecuteWorkflow(appointment.WorkflowName, req)

			require.NoError(t, qerr)
			require.Equal(t, workflows.StatusNeedsReview, during.Status, "waiting for a person")
			require.NotEmpty(t, during.ReviewCase)
			require.Equal(t, []string{"hold slot: failed", "hold slot: failed"}, unitStepNames(during))
			rin := f.Input("appointment", "open-review-hold-slot-2").(activities.ReviewInput)
			require.Equal(t, review.ReasonUnknownOutcome, rin.Reason)
			require.Equal(t, unitWorkflowID, rin.WorkflowID)
			require.Equal(t, "hold-slot-2", rin.Details["step"])

			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Equal(t, tc.reason, st.Reason)
			require.Empty(t, st.ReviewCase, "the case is closed for the saga")
			require.Equal(t, append(append([]string{}, unitUnknownUntilReview...), tc.after...), f.Executions("appointment"))
			require.Greater(t, len(f.Started("FindHold")), 2, "the second lookup asked until its bound")
			ended := f.Calls()[len(f.Calls())-1].At.Sub(start)
			require.GreaterOrEqual(t, ended, tc.minWait)
			require.Less(t, ended, tc.maxWait)
			if tc.wantHold != "" {
				require.Equal(t, tc.wantHold, st.HoldID)
			} else {
				require.Empty(t, f.Started("AuthorizeDeposit"), "no deposit without a hold")
			}
		})
	}
}

// TestUnitUnknownDepositOutcome: the appointment cannot tell whether the
// card's authorisation happened; it opens a review case (pointing at
// itself) and shows NeedsReview; the reviewer's decision comes back to it.
func TestUnitUnknownDepositOutcome(t *testing.T) {
	untilReview := []string{
		"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "AuthorizeDeposit authorize-deposit-2",
		"FindDeposit find-deposit-2", "OpenReviewCase open-review-authorize-deposit-2",
	}
	cases := []struct {
		name   string
		action review.Action
		status workflows.BookingStatus
		reason string
		after  []string
	}{
		{
			name: "retry", action: review.ActionRetry, status: workflows.StatusConfirmed,
			after: []string{"AuthorizeDeposit authorize-deposit-3", "ConfirmHold confirm-hold", "CaptureDeposit capture-deposit", "SendConfirmation send-confirmation"},
		},
		{
			name: "abandon", action: review.ActionAbandon, status: workflows.StatusPaymentFailed,
			reason: "deposit outcome unknown, review: abandon",
			after:  []string{"VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			f.Authorize = func(ctx context.Context, in activities.DepositInput) (activities.IntentResult, error) {
				if activity.GetInfo(ctx).ActivityID != "authorize-deposit-3" {
					return activities.IntentResult{}, errors.New("timeout")
				}
				f.SetLive(true)
				return activities.IntentResult{Step: workflowtest.Step(ctx, "pi_3"), Found: true, Intent: payments.Intent{ID: "pi_3", Status: payments.StatusRequiresCapture, Reference: in.Reference}}, nil
			}
			f.FindDeposit = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
				if activity.GetInfo(ctx).ActivityID == "find-deposit-1" {
					return activities.IntentResult{Authoritative: true}, nil
				}
				return activities.IntentResult{}, errors.New("payments unreachable")
			}
			req := unitRequest()
			req.Tuning = workflows.Tuning{ActivityAttempts: 1}
			var appt appointment.State
			var qerr error
			env.RegisterDelayedCallback(func() {
				if appt, qerr = unitQuery(env); qerr != nil {
					return
				}
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{Action: tc.action})
			}, 2*time.Minute)
			env.ExecuteWorkflow(appointment.WorkflowName, req)

			require.NoError(t, qerr)
			require.Equal(t, workflows.StatusNeedsReview, appt.Status, "the appointment shows the deposit's review")
			require.Equal(t, deposit.NeedsReview, appt.Payment)
			require.NotEmpty(t, appt.ReviewCase)
			rin := f.Input("appointment", "open-review-authorize-deposit-2").(activities.ReviewInput)
			require.Equal(t, unitWorkflowID, rin.WorkflowID, "the case names the workflow that waits for it")

			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Contains(t, st.Reason, tc.reason)
			require.Equal(t, append(append([]string{}, untilReview...), tc.after...), f.Sequence("appointment"))
			require.Empty(t, f.Sequence("payment"), "no payment saga")
			require.False(t, f.Live(), "no live authorisation is left behind")
			if tc.action == review.ActionRetry {
				require.Equal(t, "pi_3", st.IntentID)
				require.Empty(t, st.ReviewCase, "the case is decided")
				require.Equal(t, f.Key("appointment", "authorize-deposit-3"), st.Steps[len(untilReview)-3].Key)
			}
		})
	}
}
