package conversation_test

// Unit tests of ConversationWorkflow on the SDK's test environment: every
// activity is mocked, the appointment saga a conversation starts is a
// mocked child. A conversation never ends on its own, so each test sets
// EventsBeforeRestart low and ends at the continue-as-new, whose input is
// what the next run would start from.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// unitKey is unitCustomer's key with the development secret.
// convFake answers the conversation's activities and remembers the calls.
// understandAndDecide mocks the activities that read a message: the
// extractor, the catalogue check and the dedup decision.
// answerAndAct mocks what the conversation does about a message: replies,
// review cases, the customer's appointments, the cancel signal and the
// appointment child.
// changeBooking records the Update and answers the booking's new state.
// unitReceivedAt is when the unit tests' webhooks were accepted.
// nextRunInput requires that the run continued as new and returns the
// next run's input.
// unitSlot is the slot the wishes in these tests name (14:00 in Berlin).
// tireChange is what the extractor makes of a complete wish.
// signal is one signal to the conversation at a moment of the test clock;
// signals with the same moment are sent together, in order, as a relay
// that delivers a burst does.
// send registers the signals, one callback per moment.
// distinctEvents counts the inbound event IDs among signals: a run that
// handles that many continues as new.
// runConversation runs one conversation run until it continues as new
// after the distinct events of signals, and returns the next run's input.
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
