package appointment_test

// The downstream world of the saga unit tests (appointment_test.go,
// payment_test.go, review_test.go, compensation_test.go): AppointmentWorkflow
// and PaymentWorkflow run on the SDK's test environment, every activity is
// mocked (env.OnActivity) by a fake downstream, the payment saga runs for
// real as a child in the same environment, timers are skipped. Each path
// of the saga is driven by what the fake answers; the assertions are the
// final state, the status table and the exact order in which activities
// (compensations included) were started.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// unitWorkflowID is the appointment's workflow ID (and business reference)
// in every unit test; the payment saga runs as payment:<it>.
var unitWorkflowID = workflowtest.AppointmentID

var unitKeyPattern = regexp.MustCompile(`^bko1_[0-9a-f]{48}$`)

// unitCall is one started activity attempt, as the environment saw it.
type unitCall struct {
	Saga     string // "appointment" or "payment"
	Activity string
	ID       string
	At       time.Time
}

func (c unitCall) String() string {
	if c.Saga == "payment" {
		return "payment/" + c.Activity + " " + c.ID
	}
	return c.Activity + " " + c.ID
}

// unitFake is the downstream world of a unit test: a calendar, a payment
// API, an outbox and a review queue that answer from overridable functions
// (nil means the default: everything works) and remember what they saw.
type unitFake struct {
	mu     sync.Mutex
	calls  []unitCall
	keys   map[string]string // "<saga>/<activity ID>" -> key the activity sent
	inputs map[string]any    // "<saga>/<activity ID>" -> last input
	delays map[string]time.Duration
	holds  int
	// live is the deposit authorisation the fake payment API holds
	// (authorised and neither voided nor captured).
	live bool
	// link is the payment link (link_fake_test.go).
	link unitLink
	// child is the payment saga's result when it ran as a child.
	child    *deposit.State
	childErr error
	// lifecycle is the input the BookingWorkflow child was started with.
	lifecycle *lifecycle.Input

	holdSlot     func(context.Context, activities.HoldSlotInput) (activities.HoldSlotResult, error)
	findHold     func(context.Context, activities.FindHoldInput) (activities.FindHoldResult, error)
	confirmHold  func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error)
	authorize    func(context.Context, activities.DepositInput) (activities.IntentResult, error)
	findDeposit  func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	capture      func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	confirmation func(context.Context, activities.ConfirmationInput) (activities.Step, error)
	openReview   func(context.Context, activities.ReviewInput) (activities.Step, error)
	void         func(context.Context, activities.IntentInput) (activities.IntentResult, error)
}

func unitSagaOf(workflowID string) string {
	if strings.HasPrefix(workflowID, "payment:") {
		return "payment"
	}
	return "appointment"
}

// note records the key and input of an activity attempt.
func (f *unitFake) note(ctx context.Context, in any) {
	info := activity.GetInfo(ctx)
	k := unitSagaOf(info.WorkflowExecution.ID) + "/" + info.ActivityID
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[k] = activities.KeyOf(ctx)
	f.inputs[k] = in
}

func (f *unitFake) key(saga, activityID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys[saga+"/"+activityID]
}

func (f *unitFake) input(saga, activityID string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inputs[saga+"/"+activityID]
}

func (f *unitFake) delay(activityName string) func() time.Duration {
	return func() time.Duration {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.delays[activityName]
	}
}

// sequence lists the started activities of one saga ("" = both, the
// payment's prefixed with payment/), in start order.
func (f *unitFake) sequence(saga string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, c := range f.calls {
		switch {
		case saga == "":
			out = append(out, c.String())
		case c.Saga == saga:
			out = append(out, c.Activity+" "+c.ID)
		}
	}
	return out
}

// executions is sequence with each activity once, however many attempts
// its retry policy made: what a saga decided, not how often a
// downstream was asked.
func (f *unitFake) executions(saga string) []string {
	out := []string{}
	for _, c := range f.sequence(saga) {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

func (f *unitFake) started(activityName string) []unitCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []unitCall
	for _, c := range f.calls {
		if c.Activity == activityName {
			out = append(out, c)
		}
	}
	return out
}

func unitStep(ctx context.Context, downstreamID string) activities.Step {
	return activities.Step{Key: activities.KeyOf(ctx), Attempt: activity.GetInfo(ctx).Attempt, DownstreamID: downstreamID}
}

// newUnitEnv returns a test environment with both sagas and every activity
// registered, and every activity mocked by a fresh fake.
func newUnitEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	logs := &workflowtest.Log{}
	suite.SetLogger(logs)
	logs.LogOnFailure(t)
	env := workflowtest.Environment(&suite)
	appointment.Register(env)
	deposit.Register(env)
	lifecycle.Register(env)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: unitWorkflowID, TaskQueue: workflows.TaskQueue})

	f := &unitFake{keys: map[string]string{}, inputs: map[string]any{}, delays: map[string]time.Duration{}}
	// The booking's lifecycle outlives the appointment; its own tests are
	// in workflows/lifecycle. Here it only records what it was handed.
	env.OnWorkflow(lifecycle.WorkflowName, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in lifecycle.Input) (lifecycle.State, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lifecycle = &in
			return lifecycle.State{Status: workflows.StatusCompleted}, nil
		})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, unitCall{Saga: unitSagaOf(info.WorkflowExecution.ID), Activity: info.ActivityType.Name, ID: info.ActivityID, At: env.Now()})
	})

	// (GetWorkflowResultByID returns the root's result in SDK v1.50.0.)
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, result converter.EncodedValue, err error) {
		if info.WorkflowType.Name != "PaymentWorkflow" {
			return // the booking's lifecycle: recorded by its mock
		}
		var ps deposit.State
		if err == nil && result != nil {
			err = result.Get(&ps)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.child, f.childErr = &ps, err
	})

	a := (*activities.Activities)(nil)
	env.OnActivity(a.HoldSlot, mock.Anything, mock.Anything).AfterFn(f.delay("HoldSlot")).Return(
		func(ctx context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
			f.note(ctx, in)
			if f.holdSlot != nil {
				return f.holdSlot(ctx, in)
			}
			f.mu.Lock()
			f.holds++
			id := fmt.Sprintf("hold-%d", f.holds)
			f.mu.Unlock()
			return activities.HoldSlotResult{Step: unitStep(ctx, id), Hold: calendar.Hold{ID: id, Status: calendar.HoldHeld, Reference: in.Reference, Start: in.Start}}, nil
		})
	env.OnActivity(a.FindHold, mock.Anything, mock.Anything).AfterFn(f.delay("FindHold")).Return(
		func(ctx context.Context, in activities.FindHoldInput) (activities.FindHoldResult, error) {
			f.note(ctx, in)
			if f.findHold != nil {
				return f.findHold(ctx, in)
			}
			return activities.FindHoldResult{}, nil
		})
	env.OnActivity(a.ConfirmHold, mock.Anything, mock.Anything).AfterFn(f.delay("ConfirmHold")).Return(
		func(ctx context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			f.note(ctx, in)
			if f.confirmHold != nil {
				return f.confirmHold(ctx, in)
			}
			id := "booking-" + in.HoldID
			return activities.ConfirmHoldResult{Step: unitStep(ctx, id), Booking: calendar.Booking{ID: id, HoldID: in.HoldID}}, nil
		})
	env.OnActivity(a.ReleaseHold, mock.Anything, mock.Anything).AfterFn(f.delay("ReleaseHold")).Return(
		func(ctx context.Context, in activities.ReleaseHoldInput) (activities.Step, error) {
			f.note(ctx, in)
			return unitStep(ctx, "released"), nil
		})
	env.OnActivity(a.CancelBooking, mock.Anything, mock.Anything).AfterFn(f.delay("CancelBooking")).Return(
		func(ctx context.Context, in activities.CancelBookingInput) (activities.Step, error) {
			f.note(ctx, in)
			return unitStep(ctx, in.BookingID), nil
		})
	env.OnActivity(a.AuthorizeDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("AuthorizeDeposit")).Return(
		func(ctx context.Context, in activities.DepositInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.authorize != nil {
				return f.authorize(ctx, in)
			}
			f.mu.Lock()
			f.live = true
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, "pi_1"), Found: true,
				Intent: payments.Intent{ID: "pi_1", Status: payments.StatusRequiresCapture, Amount: in.Amount, Currency: in.Currency, Reference: in.Reference}}, nil
		})
	env.OnActivity(a.FindDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("FindDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.findDeposit != nil {
				return f.findDeposit(ctx, in)
			}
			return activities.IntentResult{Authoritative: true}, nil // our payment API: "not found" proves absence
		})
	env.OnActivity(a.CaptureDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("CaptureDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.capture != nil {
				return f.capture(ctx, in)
			}
			f.mu.Lock()
			f.live = false
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, in.IntentID), Found: true, Intent: payments.Intent{ID: in.IntentID, Status: "succeeded"}}, nil
		})
	env.OnActivity(a.VoidDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("VoidDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.void != nil {
				if res, err := f.void(ctx, in); err != nil {
					return res, err
				}
			}
			f.mu.Lock()
			f.live = false
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, "pi_1"), Found: true, Intent: payments.Intent{ID: "pi_1", Status: "canceled"}}, nil
		})
	env.OnActivity(a.SendConfirmation, mock.Anything, mock.Anything).AfterFn(f.delay("SendConfirmation")).Return(
		func(ctx context.Context, in activities.ConfirmationInput) (activities.Step, error) {
			f.note(ctx, in)
			if f.confirmation != nil {
				return f.confirmation(ctx, in)
			}
			return unitStep(ctx, "msg_1"), nil
		})
	env.OnActivity(a.ChangeBooking, mock.Anything, mock.Anything).AfterFn(f.delay("ChangeBooking")).Return(
		func(ctx context.Context, in activities.ChangeBookingInput) (json.RawMessage, error) {
			f.note(ctx, in)
			return json.RawMessage(`{"status":"Cancelled"}`), nil
		})
	env.OnActivity(a.OpenReviewCase, mock.Anything, mock.Anything).AfterFn(f.delay("OpenReviewCase")).Return(
		func(ctx context.Context, in activities.ReviewInput) (activities.Step, error) {
			f.note(ctx, in)
			if f.openReview != nil {
				return f.openReview(ctx, in)
			}
			// The review store answers a repeated key with the case it
			// opened first: the case ID is a function of the key.
			key := activities.KeyOf(ctx)
			return activities.Step{Key: key, Attempt: 1, DownstreamID: "rc_" + key[len(key)-8:]}, nil
		})
	return env, f
}

func unitRequest() appointment.Request {
	return appointment.Request{
		Tenant: "demo", Customer: "+4915112345678", Service: "tire-change",
		SlotStart: time.Date(2030, 3, 5, 13, 0, 0, 0, time.UTC), Channel: workflows.ChannelAPI,
		DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa",
	}
}

// unitResult runs to completion and returns the appointment's final state.
func unitResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) appointment.State {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st appointment.State
	require.NoError(t, env.GetWorkflowResult(&st))
	return st
}

func unitQuery(env *testsuite.TestWorkflowEnvironment) (appointment.State, error) {
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	if err != nil {
		return appointment.State{}, err
	}
	var st appointment.State
	return st, v.Get(&st)
}

func unitStepNames(st appointment.State) []string {
	out := []string{}
	for _, s := range st.Steps {
		out = append(out, s.Name+": "+s.Result)
	}
	return out
}

func unitFinalErr(errType string, details ...any) error {
	return temporal.NewNonRetryableApplicationError("downstream said no: "+errType, errType, nil, details...)
}
