package deposit_test

// Unit tests of PaymentWorkflow on its own (no parent to notify) against
// the fake payment API of workflowtest: decisions, their absence, and an
// authorisation whose outcome is unknown.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
)

func unitPaymentRequest() deposit.Request {
	return deposit.Request{
		Tenant: "demo", Reference: unitWorkflowID, Customer: "+4915112345678", Amount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Description: "Deposit tire-change", DecisionTimeout: 30 * time.Minute,
	}
}

// paymentFake is the payment API the deposit saga talks to, and what its
// activities were asked.
type paymentFake struct {
	*workflowtest.Recorder
	*workflowtest.PaymentAPI
}

// newUnitPaymentEnv runs the deposit saga alone on the time-skipping
// environment, its activities answered by a fresh fake payment API.
func newUnitPaymentEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *paymentFake) {
	t.Helper()
	env := workflowtest.NewEnv(t)
	deposit.Register(env)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: deposit.WorkflowID(unitWorkflowID), TaskQueue: workflows.TaskQueue})
	f := &paymentFake{Recorder: workflowtest.NewRecorder(), PaymentAPI: &workflowtest.PaymentAPI{}}
	f.Listen(env)
	f.Mock(env, f.Recorder, workflowtest.NoDelay)
	return env, f
}

// unitWorkflowID is the appointment whose deposit the saga takes.
var unitWorkflowID = workflowtest.AppointmentID

func unitPaymentResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) deposit.State {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var ps deposit.State
	require.NoError(t, env.GetWorkflowResult(&ps))
	return ps
}

// TestUnitPaymentDecisions runs PaymentWorkflow alone (no parent to
// notify) and drives it with decisions, or with none.
func TestUnitPaymentDecisions(t *testing.T) {
	cases := []struct {
		name     string
		decision deposit.Action // "" = no decision
		status   deposit.Status
		reason   string
		calls    []string
		minAt    time.Duration // when the last activity started
	}{
		{"no decision: voided by timer", "", deposit.Voided, "no decision in time",
			[]string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"}, 30 * time.Minute},
		{"capture", deposit.Capture, deposit.Captured, "",
			[]string{"AuthorizeDeposit authorize-deposit", "CaptureDeposit capture-deposit"}, time.Minute},
		{"void", deposit.Void, deposit.Voided, "voided by the appointment",
			[]string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"}, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitPaymentEnv(t)
			start := env.Now()
			var during deposit.State
			env.RegisterDelayedCallback(func() {
				if v, err := env.QueryWorkflow(workflows.QueryStatus); err == nil {
					_ = v.Get(&during)
				}
				if tc.decision != "" {
					env.SignalWorkflow(deposit.SignalDecision, tc.decision)
				}
			}, time.Minute)
			env.ExecuteWorkflow(deposit.WorkflowName, unitPaymentRequest())
			ps := unitPaymentResult(t, env)
			require.Equal(t, deposit.Authorized, during.Status, "authorised and waiting")
			require.Equal(t, tc.status, ps.Status)
			require.Equal(t, tc.reason, ps.Reason)
			require.Equal(t, "pi_1", ps.IntentID)
			require.Equal(t, tc.calls, f.Sequence("payment"))
			last := f.Calls()[len(f.Calls())-1]
			require.GreaterOrEqual(t, last.At.Sub(start), tc.minAt)
			if tc.decision == "" {
				require.Less(t, last.At.Sub(start), 31*time.Minute, "voided right at the decision timeout")
				require.Equal(t, "pi_1", f.Input("payment", "void-deposit").(activities.IntentInput).IntentID)
			}
			require.False(t, f.Live(), "no live authorisation is left behind")
			for _, s := range ps.Steps {
				require.Regexp(t, workflowtest.KeyPattern, s.Key, s.Name)
			}
		})
	}
}

func TestUnitPaymentUnknownAuthorisation(t *testing.T) {
	unknown := func(f *paymentFake) {
		f.Authorize = func(context.Context, activities.DepositInput) (activities.IntentResult, error) {
			return activities.IntentResult{}, errors.New("timeout")
		}
	}
	t.Run("reconciled by reference", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.FindDeposit = func(_ context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			return activities.IntentResult{Found: true, Intent: payments.Intent{ID: "pi_lost", Status: payments.StatusRequiresCapture, Reference: in.Reference}}, nil
		}
		req := unitPaymentRequest()
		req.Tuning = workflows.Tuning{ActivityAttempts: 1}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(deposit.SignalDecision, deposit.Capture) }, time.Minute)
		env.ExecuteWorkflow(deposit.WorkflowName, req)
		ps := unitPaymentResult(t, env)
		require.Equal(t, deposit.Captured, ps.Status)
		require.Equal(t, "pi_lost", ps.IntentID)
		require.Equal(t, []string{"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "CaptureDeposit capture-deposit"}, f.Sequence("payment"))
		require.Equal(t, "pi_lost", f.Input("payment", "capture-deposit").(activities.IntentInput).IntentID)
	})
	t.Run("still unknown: review, abandon, void", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.FindDeposit = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
			if activity.GetInfo(ctx).ActivityID == "find-deposit-1" {
				return activities.IntentResult{Authoritative: true}, nil
			}
			return activities.IntentResult{}, errors.New("payments unreachable")
		}
		req := unitPaymentRequest()
		req.Tuning = workflows.Tuning{ActivityAttempts: 1}
		var during deposit.State
		env.RegisterDelayedCallback(func() {
			if v, err := env.QueryWorkflow(workflows.QueryStatus); err == nil {
				_ = v.Get(&during)
			}
			env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{Action: review.ActionAbandon})
		}, time.Hour)
		env.ExecuteWorkflow(deposit.WorkflowName, req)
		ps := unitPaymentResult(t, env)
		require.Equal(t, deposit.NeedsReview, during.Status)
		require.Equal(t, deposit.Failed, ps.Status)
		require.Contains(t, ps.Reason, "deposit outcome unknown, review: abandon")
		require.Equal(t, []string{
			"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "AuthorizeDeposit authorize-deposit-2",
			"FindDeposit find-deposit-2", "OpenReviewCase open-review-authorize-deposit-2", "VoidDeposit void-deposit",
		}, f.Sequence("payment"))
		require.Equal(t, activities.IntentInput{Tenant: "demo", Reference: unitWorkflowID}, f.Input("payment", "void-deposit"), "nothing known: void by reference")
	})
}
