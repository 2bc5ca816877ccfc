package appointment_test

// The downstream world of the saga unit tests (appointment_test.go,
// payment_test.go, review_test.go, compensation_test.go): AppointmentWorkflow
// and PaymentWorkflow run on the SDK's test environment, every activity is
// mocked (env.OnActivity) by a fake downstream, the payment saga of a
// payment link runs for real as a child in the same environment (a card
// deposit is the appointment's own steps), timers are skipped. Each path
// of the saga is driven by what the fake answers; the assertions are the
// final state, the status table and the exact order in which activities
// (compensations included) were started.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// unitWorkflowID is the appointment's workflow ID (and business reference)
// in every unit test; the payment saga runs as payment:<it>.
var unitWorkflowID = workflowtest.AppointmentID

// unitFake is the downstream world of a unit test: a calendar, a payment
// API, an outbox and a review queue that answer from overridable functions
// (nil means the default: everything works) and remember what they saw.
type unitFake struct {
	*workflowtest.Recorder
	// PaymentAPI is the payment API and review queue, for the card
	// steps and the payment link's saga alike.
	*workflowtest.PaymentAPI
	mu     sync.Mutex
	delays map[string]time.Duration
	holds  int
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
	confirmation func(context.Context, activities.ConfirmationInput) (activities.Step, error)
}

func (f *unitFake) delay(activityName string) func() time.Duration {
	return func() time.Duration {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.delays[activityName]
	}
}

// newUnitEnv returns a test environment with both sagas and every activity
// registered, and every activity mocked by a fresh fake.
func newUnitEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	t.Helper()
	env := workflowtest.NewEnv(t)
	appointment.Register(env)
	deposit.Register(env)
	lifecycle.Register(env)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: unitWorkflowID, TaskQueue: workflows.TaskQueue})

	f := &unitFake{Recorder: workflowtest.NewRecorder(), PaymentAPI: &workflowtest.PaymentAPI{}, delays: map[string]time.Duration{}}
	// The booking's lifecycle outlives the appointment; its own tests are
	// in workflows/lifecycle. Here it only records what it was handed.
	env.OnWorkflow(lifecycle.WorkflowName, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, in lifecycle.Input) (lifecycle.State, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lifecycle = &in
			return lifecycle.State{Status: workflows.StatusCompleted}, nil
		})
	f.Listen(env)

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
			f.Note(ctx, in)
			if f.holdSlot != nil {
				return f.holdSlot(ctx, in)
			}
			f.mu.Lock()
			f.holds++
			id := fmt.Sprintf("hold-%d", f.holds)
			f.mu.Unlock()
			return activities.HoldSlotResult{Step: workflowtest.Step(ctx, id), Hold: calendar.Hold{ID: id, Status: calendar.HoldHeld, Reference: in.Reference, Start: in.Start}}, nil
		})
	env.OnActivity(a.FindHold, mock.Anything, mock.Anything).AfterFn(f.delay("FindHold")).Return(
		func(ctx context.Context, in activities.FindHoldInput) (activities.FindHoldResult, error) {
			f.Note(ctx, in)
			if f.findHold != nil {
				return f.findHold(ctx, in)
			}
			return activities.FindHoldResult{}, nil
		})
	env.OnActivity(a.ConfirmHold, mock.Anything, mock.Anything).AfterFn(f.delay("ConfirmHold")).Return(
		func(ctx context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			f.Note(ctx, in)
			if f.confirmHold != nil {
				return f.confirmHold(ctx, in)
			}
			id := "booking-" + in.HoldID
			return activities.ConfirmHoldResult{Step: workflowtest.Step(ctx, id), Booking: calendar.Booking{ID: id, HoldID: in.HoldID}}, nil
		})
	env.OnActivity(a.ReleaseHold, mock.Anything, mock.Anything).AfterFn(f.delay("ReleaseHold")).Return(
		func(ctx context.Context, in activities.ReleaseHoldInput) (activities.Step, error) {
			f.Note(ctx, in)
			return workflowtest.Step(ctx, "released"), nil
		})
	env.OnActivity(a.CancelBooking, mock.Anything, mock.Anything).AfterFn(f.delay("CancelBooking")).Return(
		func(ctx context.Context, in activities.CancelBookingInput) (activities.Step, error) {
			f.Note(ctx, in)
			return workflowtest.Step(ctx, in.BookingID), nil
		})
	env.OnActivity(a.SendConfirmation, mock.Anything, mock.Anything).AfterFn(f.delay("SendConfirmation")).Return(
		func(ctx context.Context, in activities.ConfirmationInput) (activities.Step, error) {
			f.Note(ctx, in)
			if f.confirmation != nil {
				return f.confirmation(ctx, in)
			}
			return workflowtest.Step(ctx, "msg_1"), nil
		})
	env.OnActivity(a.ChangeBooking, mock.Anything, mock.Anything).AfterFn(f.delay("ChangeBooking")).Return(
		func(ctx context.Context, in activities.ChangeBookingInput) (json.RawMessage, error) {
			f.Note(ctx, in)
			return json.RawMessage(`{"status":"Cancelled"}`), nil
		})
	f.Mock(env, f.Recorder, f.delay)
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
