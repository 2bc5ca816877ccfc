package conversation_test

// Unit tests of ConversationWorkflow on the SDK's test environment: every
// activity is mocked, the appointment saga a conversation starts is a
// mocked child. A conversation never ends on its own, so each test sets
// EventsBeforeRestart low and ends at the continue-as-new, whose input is
// what the next run would start from.

import (
	"context"
	"encoding/json"
	"errors"
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
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

const unitCustomer = "+4915112345678"

var unitConversationID = conversation.LegacyWorkflowID("demo", unitCustomer)

// unitKey is unitCustomer's key with the development secret.
var unitKey = workflowtest.CustomerKey(unitCustomer)

// convFake answers the conversation's activities and remembers the calls.
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
	finds [][]activities.Appointment
	found int // FindAppointments calls
}

func newConversationEnv(t *testing.T, f *convFake) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := workflowtest.Environment(&suite)
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

// understandAndDecide mocks the activities that read a message: the
// extractor, the catalogue check and the dedup decision.
func (f *convFake) understandAndDecide(env *testsuite.TestWorkflowEnvironment) {
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
			return activities.Understood{Result: r, Question: r.Question}, nil
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

// answerAndAct mocks what the conversation does about a message: replies,
// review cases, the customer's appointments, the cancel signal and the
// appointment child.
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
		func(context.Context, activities.FindAppointmentsInput) ([]activities.Appointment, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.found++
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

// changeBooking records the Update and answers the booking's new state.
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

// unitReceivedAt is when the unit tests' webhooks were accepted.
var unitReceivedAt = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func unitEvent(id, text string) conversation.InboundEvent {
	return conversation.InboundEvent{EventID: id, Channel: workflows.ChannelWhatsApp, Text: text, ReceivedAt: unitReceivedAt}
}

func unitConversationInput(restartAfter int) conversation.Input {
	return conversation.Input{Tenant: "demo", Customer: unitCustomer, CustomerKey: unitKey, DepositAmount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin", EventsBeforeRestart: restartAfter}
}

// nextRunInput requires that the run continued as new and returns the
// next run's input.
func nextRunInput(t *testing.T, env *testsuite.TestWorkflowEnvironment) conversation.Input {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "want continue-as-new, got %v", env.GetWorkflowError())
	var next conversation.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}

// unitSlot is the slot the wishes in these tests name (14:00 in Berlin).
var unitSlot = time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)

// tireChange is what the extractor makes of a complete wish.
var tireChange = intent.Result{Kind: intent.KindBook, Service: "tire-change", Start: unitSlot, HasDate: true, HasTime: true, Lang: "de"}

// signal is one signal to the conversation at a moment of the test clock;
// signals with the same moment are sent together, in order, as a relay
// that delivers a burst does.
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

// send registers the signals, one callback per moment.
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

// distinctEvents counts the inbound event IDs among signals: a run that
// handles that many continues as new.
func distinctEvents(signals []signal) int {
	ids := map[string]bool{}
	for _, s := range signals {
		if ev, ok := s.arg.(conversation.InboundEvent); ok {
			ids[ev.EventID] = true
		}
	}
	return len(ids)
}

// runConversation runs one conversation run until it continues as new
// after the distinct events of signals, and returns the next run's input.
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

// TestConversationWish: what a customer's wish starts, by what arrives.
func TestConversationWish(t *testing.T) {
	const wish = "Reifenwechsel am Dienstag um 14 Uhr"
	intentID, err := workflows.IntentID("demo", unitKey, "tire-change", "", unitSlot)
	require.NoError(t, err)
	cases := []struct {
		name       string
		understand map[string]intent.Result
		signals    []signal
		channel    workflows.Channel // of the appointment, if one starts
		decided    int               // dedup decisions asked for
		replies    []string          // a part of each reply, in order
	}{
		{"a WhatsApp wish starts one appointment", map[string]intent.Result{wish: tireChange},
			[]signal{whatsapp(time.Second, "SMa", wish)},
			workflows.ChannelWhatsApp, 1, []string{"Danke! Wir buchen Reifenwechsel"}},
		{"a spoken wish starts it on the voice channel", map[string]intent.Result{wish: tireChange},
			[]signal{inbound(time.Second, workflows.ChannelVoice, "CAa:gather:1", wish)},
			workflows.ChannelVoice, 1, []string{"Danke! Wir buchen"}},
		{"a redelivered message starts nothing more", map[string]intent.Result{wish: tireChange},
			[]signal{whatsapp(time.Second, "SMa", wish), whatsapp(time.Second, "SMa", wish),
				whatsapp(30*time.Second, "SMa", wish), whatsapp(time.Minute, "SMz", "Danke")},
			workflows.ChannelWhatsApp, 1, []string{"Danke! Wir buchen", "Welchen Termin"}},
		{"the same wish in a new message is merged", map[string]intent.Result{wish: tireChange},
			[]signal{whatsapp(time.Second, "SMa", wish), whatsapp(time.Minute, "SMb", wish)},
			workflows.ChannelWhatsApp, 2, []string{"Danke! Wir buchen", "bereits in Bearbeitung"}},
		{"a later message fills the gaps of the slot under discussion", map[string]intent.Result{
			"Reifenwechsel bitte": {Kind: intent.KindBook, Service: "tire-change", Question: "Wann passt es Ihnen?"},
			"Dienstag 14 Uhr":     {Kind: intent.KindBook, Start: unitSlot, HasDate: true, HasTime: true}},
			[]signal{whatsapp(time.Second, "SMa", "Reifenwechsel bitte"), whatsapp(time.Minute, "SMb", "Dienstag 14 Uhr")},
			workflows.ChannelWhatsApp, 1, []string{"Wann passt es Ihnen?", "Danke! Wir buchen"}},
		{"an unclear message asks back and starts nothing", nil,
			[]signal{whatsapp(time.Second, "SMa", "Hallo")},
			"", 0, []string{"Welchen Termin und welche Leistung"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{understand: tc.understand}
			runConversation(t, f, unitConversationInput(0), tc.signals)

			require.Len(t, f.decided, tc.decided)
			require.Len(t, f.replies, len(tc.replies), "one reply per distinct event")
			for i, part := range tc.replies {
				require.Contains(t, f.replies[i].Text, part)
			}
			if tc.channel == "" {
				require.Empty(t, f.children)
				return
			}
			require.Len(t, f.children, 1, "exactly one appointment")
			require.Equal(t, appointment.WorkflowID("demo", intentID), f.childIDs[0], "the workflow ID derives from the intent")
			require.Equal(t, appointment.Request{
				Tenant: "demo", Customer: unitCustomer, CustomerKey: unitKey, Service: "tire-change", SlotStart: unitSlot, Channel: tc.channel, IntentID: intentID,
				DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin",
				AcceptedAt: unitReceivedAt, // the booking's phases count from the wish's webhook
			}, f.children[0])
		})
	}
}

// TestConversationWithoutKeyHandsTheWishToAPerson: a conversation from
// before customer keys (its input has none) cannot key the intent ID, and
// must not fall back to the plain number's hash: nothing is decided or
// started, a person gets a case, and the customer is told so.
func TestConversationWithoutKeyHandsTheWishToAPerson(t *testing.T) {
	const wish = "Reifenwechsel am Dienstag um 14 Uhr"
	f := &convFake{understand: map[string]intent.Result{wish: tireChange}}
	in := unitConversationInput(0)
	in.CustomerKey = ""
	runConversation(t, f, in, []signal{whatsapp(time.Second, "SMa", wish)})

	require.Empty(t, f.decided, "no dedup decision under a plain hash")
	require.Empty(t, f.children)
	require.Len(t, f.reviews, 1)
	require.Equal(t, review.ReasonUnknownOutcome, f.reviews[0].Reason)
	require.Contains(t, f.reviews[0].Details["error"], "no customer key")
	require.Len(t, f.replies, 1)
	require.Contains(t, f.replies[0].Text, "ein Mitarbeiter kümmert sich darum")
}

// TestConversationWishThatCannotBeCheckedGoesToAPerson: the dedup
// decision fails for good. "Ein Mitarbeiter meldet sich" is said only with
// a review case that carries the wish; when no case can be opened either,
// the customer is asked to write again. Before, the promise was made with
// no case behind it and the wish was dropped.
func TestConversationWishThatCannotBeCheckedGoesToAPerson(t *testing.T) {
	const wish = "Reifenwechsel am Dienstag um 14 Uhr"
	final := temporal.NewNonRetryableApplicationError("dedup decide: database refused", "Final", nil)
	cases := []struct {
		name      string
		reviewErr error
		cases     int
		reply     string
	}{
		{"a case carries the wish", nil, 1, "ein Mitarbeiter meldet sich"},
		{"no case: the customer is asked to write again", temporal.NewNonRetryableApplicationError("review store refused", "Final", nil), 0, "schreiben Sie uns in ein paar Minuten noch einmal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{understand: map[string]intent.Result{wish: tireChange}, decideErr: final, reviewErr: tc.reviewErr}
			runConversation(t, f, unitConversationInput(0), []signal{whatsapp(time.Second, "SMa", wish)})

			require.Len(t, f.decided, 1)
			require.Empty(t, f.children, "nothing started")
			require.Len(t, f.reviews, 1, "a case is asked for")
			require.Equal(t, review.ReasonUnknownOutcome, f.reviews[0].Reason)
			carried, ok := f.reviews[0].Details["wish"].(map[string]any) // as the review store reads it back
			require.True(t, ok, "the case carries the wish: %v", f.reviews[0].Details)
			require.Equal(t, "tire-change", carried["service"])
			require.Equal(t, unitSlot.UTC().Format(time.RFC3339), carried["slot_start"])
			require.Contains(t, f.reviews[0].Details["error"], "database refused")
			require.Len(t, f.replies, 1)
			require.Contains(t, f.replies[0].Text, tc.reply)
			if tc.cases == 0 {
				require.NotContains(t, f.replies[0].Text, "Mitarbeiter", "no promise without a case")
			}
		})
	}
}

// continueAsNewCase is a run that ends at the restart boundary: the input
// it starts from, the signals it gets, and what is checked afterwards.
type continueAsNewCase struct {
	name    string
	in      func(*conversation.Input)
	signals []signal
	check   func(t *testing.T, f *convFake, next conversation.Input)
}

func continueAsNewCases() []continueAsNewCase {
	waiting := dedup.Intent{Tenant: "demo", IntentID: "intent-b", Customer: unitCustomer, Service: "inspection", SlotStart: unitSlot,
		Channel: "whatsapp", EventID: "SMb", WorkflowID: appointment.WorkflowID("demo", "intent-b"), ConversationID: unitConversationID}
	pending := []conversation.PendingDecision{{CaseID: "rc_dup", Intent: waiting, Channel: workflows.ChannelWhatsApp}}
	window := make([]string, 200)
	for i := range window {
		window[i] = fmt.Sprintf("SM%03d", i)
	}
	return []continueAsNewCase{
		{"an event arriving with the last one is handled before the restart", nil,
			[]signal{whatsapp(time.Second, "SMa", "Hallo"), whatsapp(time.Second, "SMb", "Wie bitte?")},
			func(t *testing.T, f *convFake, next conversation.Input) {
				require.Equal(t, []string{"Hallo", "Wie bitte?"}, f.extracted)
				require.Equal(t, []string{"SMa", "SMb"}, next.Seen)
				require.Equal(t, 1, next.EventsBeforeRestart, "the setting is carried too")
			}},
		{"seen IDs are carried, so a redelivery after the restart is ignored",
			func(in *conversation.Input) { in.Seen = []string{"SMold"} },
			[]signal{whatsapp(time.Second, "SMold", "Hallo"), whatsapp(time.Minute, "SMa", "Wie bitte?")},
			func(t *testing.T, f *convFake, next conversation.Input) {
				require.Equal(t, []string{"Wie bitte?"}, f.extracted, "the redelivery is neither understood nor counted")
				require.Len(t, f.replies, 1)
				require.Equal(t, []string{"SMold", "SMa"}, next.Seen)
			}},
		{"a review decision arriving with the last event is handled",
			func(in *conversation.Input) { in.Pending = pending },
			[]signal{whatsapp(time.Second, "SMc", "Hallo"), {at: time.Second, name: workflows.SignalReviewDecision,
				arg: workflows.ReviewDecision{CaseID: "rc_dup", Action: review.ActionSeparate}}},
			func(t *testing.T, f *convFake, next conversation.Input) {
				require.Empty(t, next.Pending, "the decision was handled, not left behind")
				require.Len(t, f.decided, 1)
				require.True(t, f.decided[0].Separate, "the reviewer's separate reaches dedup")
				require.Len(t, f.children, 1, "the second appointment started")
				require.Equal(t, "inspection", f.children[0].Service)
			}},
		{"a review case still open is carried",
			func(in *conversation.Input) { in.Pending = pending },
			[]signal{whatsapp(time.Second, "SMc", "Hallo")},
			func(t *testing.T, f *convFake, next conversation.Input) {
				require.Equal(t, pending, next.Pending)
				require.Empty(t, f.children)
			}},
		{"the slot under discussion is carried", nil,
			[]signal{whatsapp(time.Second, "SMa", "Reifenwechsel bitte")},
			func(t *testing.T, f *convFake, next conversation.Input) {
				require.Equal(t, &conversation.Offer{Service: "tire-change"}, next.Offer)
				require.Empty(t, f.decided, "nothing to decide without a time")
			}},
		{"the seen window keeps the newest 200 IDs",
			func(in *conversation.Input) { in.Seen = window },
			[]signal{whatsapp(time.Second, "SMnew", "Hallo")},
			func(t *testing.T, _ *convFake, next conversation.Input) {
				require.Equal(t, append(append([]string{}, window[1:]...), "SMnew"), next.Seen)
			}},
	}
}

// TestConversationContinueAsNew: what one run hands to the next, and that
// signals arriving together with the run's last event are handled, not
// left in their channel.
func TestConversationContinueAsNew(t *testing.T) {
	for _, tc := range continueAsNewCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{understand: map[string]intent.Result{"Reifenwechsel bitte": {Kind: intent.KindBook, Service: "tire-change"}}}
			in := unitConversationInput(1)
			if tc.in != nil {
				tc.in(&in)
			}
			tc.check(t, f, runConversation(t, f, in, tc.signals))
		})
	}
}
