package conversation_test

// The conversation's unit-test world: a fake of its activities, its
// inputs and events, and a runner that sends them as signals.

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

const unitCustomer = "+4915112345678"

var unitConversationID = conversation.LegacyWorkflowID("demo", unitCustomer)

var unitKey = workflowtest.CustomerKey(unitCustomer)

type convFake struct {
	mu        sync.Mutex
	extracted []string // event texts, in order
	decided   []dedup.Intent
	replies   []activities.ReplyInput
	reviews   []activities.ReviewInput
	cancels   []string // appointment IDs signalled "cancel"
	children  []appointment.Request
	childIDs  []string // workflow IDs the children started under
	// decideErr fails every dedup decision; reviewErr every review case.
	decideErr, reviewErr error
	// intents are the intent IDs dedup has seen: a repeat is merged, as
	// the real decision merges a wish into the appointment under way.
	intents map[string]bool
	// signalErr fails the cancel signal (the appointment ended meanwhile).
	signalErr error
	// understand maps a text to its extraction (default: unclear).
	understand map[string]intent.Result
	// appointments is what FindAppointments answers; findErr fails it.
	appointments []activities.Appointment
	findErr      error
	// changes are the booking Updates asked for; changeErr fails them,
	// else the answer is a LifecycleState in the asked state.
	changes   []activities.ChangeBookingInput
	changeErr error
	// afterChange, when set, is what FindAppointments answers once a
	// change was made (the lifecycle moved on).
	afterChange []activities.Appointment
	// finds, when set, are FindAppointments' answers in turn, the last
	// repeated (the bookings as they move on between two reads).
	finds      [][]activities.Appointment
	found      int // FindAppointments calls
	findInputs []activities.FindAppointmentsInput
	// consents are the consent changes recorded (RecordConsent), which
	// consentErr fails; optedOut is the customer's state they leave.
	consents   []consent.Change
	consentErr error
	optedOut   bool
}

func newConversationEnv(t *testing.T, f *convFake) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := workflowtest.NewEnv(t)
	// A loaded CI machine can stall the workflow goroutine past the 1 s
	// default and fail a correct run as a deadlock.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	// The test clock starts when the webhooks were accepted, so unitSlot
	// is eight days ahead whatever day the test runs (a test about a rule
	// of time sets its own start after this).
	env.SetStartTime(unitReceivedAt)
	conversation.Register(env)
	appointment.Register(env)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: unitConversationID, TaskQueue: workflows.TaskQueue})
	f.understandAndDecide(env)
	f.answerAndAct(env)
	return env
}

func (f *convFake) understandAndDecide(env *testsuite.TestWorkflowEnvironment) {
	a := (*activities.Activities)(nil)
	env.OnActivity(a.ExtractIntent, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ExtractInput) (activities.Understood, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.extracted = append(f.extracted, in.Text)
			if action, ok := consent.Match(in.Text, nil, nil); ok && in.Channel == string(workflows.ChannelWhatsApp) {
				return activities.Understood{Result: intent.Result{Kind: intent.KindUnclear}, Consent: action}, nil
			}
			r, ok := f.understand[in.Text]
			if !ok {
				r = intent.Result{Kind: intent.KindUnclear}
			}
			return activities.Understood{Result: r, Question: r.Question}, nil
		})
	env.OnActivity(a.RecordConsent, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in consent.Change) (bool, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.consentErr != nil {
				return false, f.consentErr
			}
			f.consents = append(f.consents, in)
			was := f.optedOut
			f.optedOut = in.Action == consent.OptOut
			return was != f.optedOut, nil
		})
	env.OnActivity(a.ValidateIntent, mock.Anything, mock.Anything).Return("", nil)
	env.OnActivity(a.DecideDedup, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in dedup.Intent) (dedup.Decision, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.decided = append(f.decided, in)
			if f.decideErr != nil {
				return dedup.Decision{}, f.decideErr
			}
			if f.intents[in.IntentID] && !in.Separate {
				return dedup.Decision{Kind: dedup.Merge, IntentID: in.IntentID, WorkflowID: in.WorkflowID}, nil
			}
			if f.intents == nil {
				f.intents = map[string]bool{}
			}
			f.intents[in.IntentID] = true
			return dedup.Decision{Kind: dedup.New, IntentID: in.IntentID, WorkflowID: in.WorkflowID}, nil
		})
}

func (f *convFake) answerAndAct(env *testsuite.TestWorkflowEnvironment) {
	a := (*activities.Activities)(nil)
	env.OnActivity(a.SendReply, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ReplyInput) (activities.Step, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.replies = append(f.replies, in)
			return activities.Step{}, nil
		})
	env.OnActivity(a.OpenReviewCase, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ReviewInput) (activities.Step, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.reviews = append(f.reviews, in)
			if f.reviewErr != nil {
				return activities.Step{}, f.reviewErr
			}
			return activities.Step{DownstreamID: "rc_cancel"}, nil
		})
	env.OnActivity(a.FindAppointments, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FindAppointmentsInput) ([]activities.Appointment, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.found++
			f.findInputs = append(f.findInputs, in)
			if len(f.finds) > 0 {
				return f.finds[min(f.found, len(f.finds))-1], f.findErr
			}
			if len(f.changes) > 0 && f.afterChange != nil {
				return f.afterChange, f.findErr
			}
			return f.appointments, f.findErr
		})
	env.OnActivity(a.ChangeBooking, mock.Anything, mock.Anything).Return(f.changeBooking)
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", workflows.SignalCancel, mock.Anything).Return(
		func(_, workflowID, _, _ string, _ any) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.signalErr != nil {
				return f.signalErr
			}
			f.cancels = append(f.cancels, workflowID)
			return nil
		})
	env.OnWorkflow(appointment.WorkflowName, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, req appointment.Request) (appointment.State, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.children = append(f.children, req)
			f.childIDs = append(f.childIDs, workflow.GetInfo(ctx).WorkflowExecution.ID)
			return appointment.State{Status: workflows.StatusConfirmed}, nil
		})
}

func (f *convFake) changeBooking(_ context.Context, in activities.ChangeBookingInput) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changeErr != nil {
		return nil, f.changeErr
	}
	f.changes = append(f.changes, in)
	st := lifecycle.State{Status: workflows.StatusCancelled, Reference: in.AppointmentID}
	if in.Update == lifecycle.UpdateReschedule {
		var req lifecycle.RescheduleRequest
		if err := json.Unmarshal(in.Args, &req); err != nil {
			return nil, err
		}
		st = lifecycle.State{Status: workflows.StatusConfirmed, Reference: in.AppointmentID, SlotStart: req.Start}
	}
	return json.Marshal(st)
}

var unitReceivedAt = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func unitEvent(id, text string) conversation.InboundEvent {
	return conversation.InboundEvent{EventID: id, Channel: workflows.ChannelWhatsApp, Text: text, ReceivedAt: unitReceivedAt}
}

func unitConversationInput(restartAfter int) conversation.Input {
	return conversation.Input{Tenant: "demo", Customer: unitCustomer, CustomerKey: unitKey, DepositAmount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin", EventsBeforeRestart: restartAfter}
}

func nextRunInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) conversation.Input {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "want continue-as-new, got %v", env.GetWorkflowError())
	var next conversation.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}

var unitSlot = time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)

var tireChange = intent.Result{Kind: intent.KindBook, Service: "tire-change", Start: unitSlot, HasDate: true, HasTime: true, Lang: "de"}

type signal struct {
	at   time.Duration
	name string
	arg  any
}

func inbound(at time.Duration, ch workflows.Channel, id, text string) signal {
	ev := unitEvent(id, text)
	ev.Channel = ch
	return signal{at: at, name: conversation.SignalInbound, arg: ev}
}

func whatsapp(at time.Duration, id, text string) signal {
	return inbound(at, workflows.ChannelWhatsApp, id, text)
}

func send(env *testsuite.TestWorkflowEnvironment, signals []signal) {
	var moments []time.Duration
	byMoment := map[time.Duration][]signal{}
	for _, s := range signals {
		if _, ok := byMoment[s.at]; !ok {
			moments = append(moments, s.at)
		}
		byMoment[s.at] = append(byMoment[s.at], s)
	}
	for _, at := range moments {
		burst := byMoment[at]
		env.RegisterDelayedCallback(func() {
			for _, s := range burst {
				env.SignalWorkflow(s.name, s.arg)
			}
		}, at)
	}
}

func distinctEvents(signals []signal) int {
	ids := map[string]bool{}
	for _, s := range signals {
		if ev, ok := s.arg.(conversation.InboundEvent); ok {
			ids[ev.EventID] = true
		}
	}
	return len(ids)
}

func runConversation(t *testing.T, f *convFake, in conversation.Input, signals []signal) conversation.Input {
	t.Helper()
	env := newConversationEnv(t, f)
	send(env, signals)
	if in.EventsBeforeRestart == 0 {
		in.EventsBeforeRestart = distinctEvents(signals)
	}
	env.ExecuteWorkflow(conversation.WorkflowName, in)
	return nextRunInput(t, env)
}
