package lifecycle_test

// The lifecycle's unit-test world: a fake of its activities that logs
// every call, its environment and input, and Updates sent at a moment.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

type bookingFake struct {
	mu        sync.Mutex
	cancels   int
	refunds   int
	voids     int
	messages  []activities.ConfirmationInput
	sentAt    []time.Time
	cases     int
	reviews   []activities.ReviewInput
	calendarE error // CancelBooking's answer when non-nil
	// calls logs the calendar calls in order ("cancel bk_1").
	calls []string
	// sendDelay is how long (workflow time) a message takes to send.
	sendDelay time.Duration
	// published logs the BookingStatus upserts when a test mocks them;
	// statusAtMessage is the last one at each message.
	published, statusAtMessage []workflows.BookingStatus
}

func (f *bookingFake) count(n *int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*n++
}

func (f *bookingFake) log(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func newBookingEnv(t *testing.T, f *bookingFake) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := workflowtest.NewEnv(t)
	lifecycle.Register(env)
	a := &activities.Activities{}
	env.RegisterActivity(a)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: lifecycle.WorkflowID(workflowtest.AppointmentID), TaskQueue: workflows.TaskQueue})
	// A fixed clock far from a daylight-saving change: local times below
	// are then whole hours apart, whatever day the test runs.
	env.SetStartTime(time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC))
	env.OnActivity(a.CancelBooking, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CancelBookingInput) (activities.Step, error) {
			f.count(&f.cancels)
			f.log("cancel " + in.BookingID + " " + in.Reference)
			return activities.Step{Key: "k-cancel", Attempt: 1, DownstreamID: "bk_1"}, f.calendarE
		})
	env.OnActivity(a.RefundDeposit, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.IntentInput) (activities.Step, error) {
			f.count(&f.refunds)
			if in.IntentID != "pi_1" {
				return activities.Step{}, errors.New("unexpected intent " + in.IntentID)
			}
			return activities.Step{Key: "k-refund", Attempt: 1, DownstreamID: "re_1"}, nil
		})
	env.OnActivity(a.VoidDeposit, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.IntentInput) (activities.IntentResult, error) {
			f.count(&f.voids)
			return activities.IntentResult{Step: activities.Step{Key: "k-void", DownstreamID: "re_2"}}, nil
		})
	env.OnActivity(a.SendConfirmation, mock.Anything, mock.Anything).After(f.sendDelay).Return(
		func(_ context.Context, in activities.ConfirmationInput) (activities.Step, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.messages = append(f.messages, in)
			f.sentAt = append(f.sentAt, env.Now())
			if n := len(f.published); n > 0 {
				f.statusAtMessage = append(f.statusAtMessage, f.published[n-1])
			}
			return activities.Step{Key: "k-msg", Attempt: 1, DownstreamID: "msg_c"}, nil
		})
	env.OnActivity(a.OpenReviewCase, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ReviewInput) (activities.Step, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.cases++
			f.reviews = append(f.reviews, in)
			return activities.Step{Key: "k-case", DownstreamID: fmt.Sprintf("case_%d", f.cases)}, nil
		})
	return env
}

func lifecycleInput(env *testsuite.TestWorkflowEnvironment) lifecycle.Input {
	start := env.Now().Add(72 * time.Hour)
	return lifecycle.Input{
		Tenant: "demo", Reference: workflowtest.AppointmentID, Customer: "+4915112345678", Service: "tire-change",
		Channel: workflows.ChannelWhatsApp, BookingID: "bk_1", SlotStart: start, SlotEnd: start.Add(time.Hour),
		Deposit: 2000, Currency: "eur", IntentID: "pi_1", Timezone: "Europe/Berlin",
		Tuning: workflows.Tuning{MaxRetryInterval: time.Second, CompensationMaxInterval: time.Second},
	}
}

type answer struct {
	rejected error
	state    lifecycle.State
	err      error
	done     bool
}

// updateAt sends the Update name with id and arg at offset after the start.
func updateAt(env *testsuite.TestWorkflowEnvironment, name string, offset time.Duration, id string, arg any, into *answer) {
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { into.rejected, into.done = err, true },
			OnComplete: func(v any, err error) {
				into.err, into.done = err, true
				switch s := v.(type) {
				case lifecycle.State:
					into.state = s
				case converter.EncodedValue:
					if s != nil && s.HasValue() {
						into.err = errors.Join(err, s.Get(&into.state))
					}
				}
			},
		}, arg)
	}, offset)
}

func cancelAt(env *testsuite.TestWorkflowEnvironment, offset time.Duration, id string, into *answer) {
	updateAt(env, lifecycle.UpdateCancel, offset, id, lifecycle.CancelRequest{Reason: "customer asked"}, into)
}
