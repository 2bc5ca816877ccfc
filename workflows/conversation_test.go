package workflows_test

// Unit tests of ConversationWorkflow on the SDK's test environment: every
// activity is mocked, the appointment saga a conversation starts is a
// mocked child. A conversation never ends on its own, so each test sets
// EventsBeforeRestart low and ends at the continue-as-new, whose input is
// what the next run would start from.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

const unitCustomer = "+4915112345678"

var unitConversationID = workflows.ConversationWorkflowID("demo", unitCustomer)

// convFake answers the conversation's activities and remembers the calls.
type convFake struct {
	mu        sync.Mutex
	extracted []string // event texts, in order
	decided   []dedup.Intent
	replies   []activities.ReplyInput
	reviews   []activities.ReviewInput
	cancels   []string // appointment IDs signalled "cancel"
	children  []workflows.BookingRequest
	// understand maps a text to its extraction (default: unclear).
	understand map[string]intent.Result
	// appointments is what FindAppointments answers; findErr fails it.
	appointments []activities.Appointment
	findErr      error
}

func newConversationEnv(t *testing.T, f *convFake) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	// A loaded CI machine can stall the workflow goroutine past the 1 s
	// default and fail a correct run as a deadlock.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	env.RegisterWorkflow(workflows.ConversationWorkflow)
	env.RegisterWorkflow(workflows.AppointmentWorkflow)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: unitConversationID, TaskQueue: workflows.TaskQueue})
	a := (*activities.Activities)(nil)
	env.OnActivity(a.ExtractIntent, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ExtractInput) (activities.Understood, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.extracted = append(f.extracted, in.Text)
			r, ok := f.understand[in.Text]
			if !ok {
				r = intent.Result{Kind: intent.KindUnclear}
			}
			return activities.Understood{Result: r}, nil
		})
	env.OnActivity(a.ValidateIntent, mock.Anything, mock.Anything).Return("", nil)
	env.OnActivity(a.DecideDedup, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in dedup.Intent) (dedup.Decision, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.decided = append(f.decided, in)
			return dedup.Decision{Kind: dedup.New, IntentID: in.IntentID, WorkflowID: in.WorkflowID}, nil
		})
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
			return activities.Step{DownstreamID: "rc_cancel"}, nil
		})
	env.OnActivity(a.FindAppointments, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.FindAppointmentsInput) ([]activities.Appointment, error) {
			return f.appointments, f.findErr
		})
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", workflows.SignalCancel, mock.Anything).Return(
		func(_, workflowID, _, _ string, _ any) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.cancels = append(f.cancels, workflowID)
			return nil
		})
	env.OnWorkflow(workflows.AppointmentWorkflow, mock.Anything, mock.Anything).Return(
		func(_ workflow.Context, req workflows.BookingRequest) (workflows.BookingState, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.children = append(f.children, req)
			return workflows.BookingState{Status: workflows.StatusConfirmed}, nil
		})
	return env
}

func unitEvent(id, text string) workflows.InboundEvent {
	return workflows.InboundEvent{EventID: id, Channel: workflows.ChannelWhatsApp, Text: text, ReceivedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
}

func unitConversationInput(restartAfter int) workflows.ConversationInput {
	return workflows.ConversationInput{Tenant: "demo", Customer: unitCustomer, DepositAmount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin", EventsBeforeRestart: restartAfter}
}

// nextRunInput requires that the run continued as new and returns the
// next run's input.
func nextRunInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.ConversationInput {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "want continue-as-new, got %v", env.GetWorkflowError())
	var next workflows.ConversationInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}

func TestConversationIgnoresDuplicateEventID(t *testing.T) {
	f := &convFake{}
	env := newConversationEnv(t, f)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalInbound, unitEvent("SMa", "Hallo"))
		env.SignalWorkflow(workflows.SignalInbound, unitEvent("SMa", "Hallo")) // the relay delivers twice
	}, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalInbound, unitEvent("SMb", "Wie bitte?")) }, time.Minute)
	env.ExecuteWorkflow(workflows.ConversationWorkflow, unitConversationInput(2))

	next := nextRunInput(t, env)
	require.Equal(t, []string{"Hallo", "Wie bitte?"}, f.extracted, "the duplicate is neither understood nor counted")
	require.Len(t, f.replies, 2, "one reply per distinct event")
	require.Equal(t, []string{"SMa", "SMb"}, next.Seen, "the seen IDs are carried into the next run")
	require.Equal(t, 2, next.EventsBeforeRestart, "the setting is carried too")
}

// TestConversationDrainsReviewDecisionAtContinueAsNew: the event that
// reaches the restart boundary and a reviewer's "separate" arrive
// together. The decision must take effect in this run (a second booking
// starts) instead of being left in its channel when the run continues as
// new.
func TestConversationDrainsReviewDecisionAtContinueAsNew(t *testing.T) {
	f := &convFake{}
	env := newConversationEnv(t, f)
	slot := time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)
	in := unitConversationInput(1)
	waiting := dedup.Intent{Tenant: "demo", IntentID: "intent-b", Customer: unitCustomer, Service: "inspection", SlotStart: slot,
		Channel: "whatsapp", EventID: "SMb", WorkflowID: workflows.AppointmentWorkflowID("demo", "intent-b"), ConversationID: unitConversationID}
	in.Pending = []workflows.PendingDecision{{CaseID: "rc_dup", Intent: waiting, Channel: workflows.ChannelWhatsApp}}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalInbound, unitEvent("SMc", "Hallo"))
		env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: "rc_dup", Action: review.ActionSeparate})
	}, time.Second)
	env.ExecuteWorkflow(workflows.ConversationWorkflow, in)

	next := nextRunInput(t, env)
	require.Empty(t, next.Pending, "the decision was handled, not left behind")
	require.Len(t, f.decided, 1)
	require.True(t, f.decided[0].Separate, "the reviewer's separate reaches dedup")
	require.Len(t, f.children, 1, "the second appointment started")
	require.Equal(t, "inspection", f.children[0].Service)
}

// TestConversationCancellationWish: what a "stornieren" does, by what the
// customer has booked.
func TestConversationCancellationWish(t *testing.T) {
	slot := time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)
	appt := func(id string, found, running bool, status workflows.BookingStatus) activities.Appointment {
		return activities.Appointment{Booked: dedup.Booked{IntentID: id, Service: "tire-change", SlotStart: slot,
			WorkflowID: workflows.AppointmentWorkflowID("demo", id)}, Found: found, Running: running, Status: string(status)}
	}
	cases := []struct {
		name         string
		appointments []activities.Appointment
		findErr      error
		wantCancel   []string
		wantReview   string // the case's situation; "" means no case
		wantReply    string
	}{
		{"holding: cancelled at once", []activities.Appointment{appt("a", true, true, workflows.StatusHeld)},
			nil, []string{workflows.AppointmentWorkflowID("demo", "a")}, "", "Wir stornieren Ihre noch nicht bestätigte Buchung"},
		{"confirmed: review", []activities.Appointment{appt("a", true, false, workflows.StatusConfirmed)},
			nil, nil, "confirmed", "bereits bestätigt"},
		{"ended without a booking is no candidate", []activities.Appointment{appt("a", true, false, workflows.StatusRejected)},
			nil, nil, "no_booking_found", "keine offene Buchung"},
		{"several: review", []activities.Appointment{appt("a", true, true, workflows.StatusHeld), appt("b", true, false, workflows.StatusConfirmed)},
			nil, nil, "several_candidates", "mehrere Buchungen"},
		{"workflow missing: review", []activities.Appointment{appt("a", false, false, "")},
			nil, nil, "state_unknown", "nicht sicher feststellen"},
		{"lookup failed: review", nil, temporal.NewNonRetryableApplicationError("db down", "Test", nil),
			nil, "lookup_failed", "nicht prüfen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{appointments: tc.appointments, findErr: tc.findErr,
				understand: map[string]intent.Result{"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"}}}
			env := newConversationEnv(t, f)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalInbound, unitEvent("SMx", "Bitte stornieren")) }, time.Second)
			env.ExecuteWorkflow(workflows.ConversationWorkflow, unitConversationInput(1))
			nextRunInput(t, env)

			require.Equal(t, tc.wantCancel, f.cancels)
			if tc.wantReview == "" {
				require.Empty(t, f.reviews)
			} else {
				require.Len(t, f.reviews, 1, "exactly one case")
				require.Equal(t, review.ReasonCancellationRequest, f.reviews[0].Reason)
				require.Equal(t, unitConversationID, f.reviews[0].WorkflowID, "the case points at the conversation, which stays")
				require.Equal(t, tc.wantReview, f.reviews[0].Details["situation"])
			}
			require.Len(t, f.replies, 1, "one reply")
			require.Contains(t, f.replies[0].Text, tc.wantReply)
		})
	}
}
