package appointment_test

// Unit tests of PaymentWorkflow on its own (no parent to notify) against
// the fake downstream of saga_fake_test.go: decisions, their absence, and
// an authorisation whose outcome is unknown.

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
)

func unitPaymentRequest() deposit.Request {
	return deposit.Request{
		Tenant: "demo", Reference: unitWorkflowID, Customer: "+4915112345678", Amount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Description: "Deposit tire-change", DecisionTimeout: 30 * time.Minute,
	}
}

func newUnitPaymentEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	env, f := newUnitEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: deposit.WorkflowID(unitWorkflowID), TaskQueue: workflows.TaskQueue})
	return env, f
}

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
			require.Equal(t, tc.calls, f.sequence("payment"))
			last := f.calls[len(f.calls)-1]
			require.GreaterOrEqual(t, last.At.Sub(start), tc.minAt)
			if tc.decision == "" {
				require.Less(t, last.At.Sub(start), 31*time.Minute, "voided right at the decision timeout")
				require.Equal(t, "pi_1", f.input("payment", "void-deposit").(activities.IntentInput).IntentID)
			}
			require.False(t, f.live, "no live authorisation is left behind")
			for _, s := range ps.Steps {
				require.Regexp(t, unitKeyPattern, s.Key, s.Name)
			}
		})
	}
}

func TestUnitPaymentUnknownAuthorisation(t *testing.T) {
	unknown := func(f *unitFake) {
		f.authorize = func(context.Context, activities.DepositInput) (activities.IntentResult, error) {
			return activities.IntentResult{}, errors.New("timeout")
		}
	}
	t.Run("reconciled by reference", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.findDeposit = func(_ context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			return activities.IntentResult{Found: true, Intent: payments.Intent{ID: "pi_lost", Status: payments.StatusRequiresCapture, Reference: in.Reference}}, nil
		}
		req := unitPaymentRequest()
		req.Tuning = workflows.Tuning{ActivityAttempts: 1}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(deposit.SignalDecision, deposit.Capture) }, time.Minute)
		env.ExecuteWorkflow(deposit.WorkflowName, req)
		ps := unitPaymentResult(t, env)
		require.Equal(t, deposit.Captured, ps.Status)
		require.Equal(t, "pi_lost", ps.IntentID)
		require.Equal(t, []string{"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "CaptureDeposit capture-deposit"}, f.sequence("payment"))
		require.Equal(t, "pi_lost", f.input("payment", "capture-deposit").(activities.IntentInput).IntentID)
	})
	t.Run("still unknown: review, abandon, void", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.findDeposit = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
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
		}, f.sequence("payment"))
		require.Equal(t, activities.IntentInput{Tenant: "demo", Reference: unitWorkflowID}, f.input("payment", "void-deposit"), "nothing known: void by reference")
	})
}
