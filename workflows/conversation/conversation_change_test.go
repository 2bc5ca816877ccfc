package conversation_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// changeBooked is a confirmed booking at unitSlot whose lifecycle is in
// lifecycle, and its slot now (zero: unmoved).
func changeBooked(lifecycle workflows.BookingStatus, now time.Time) activities.Appointment {
	return activities.Appointment{Booked: dedup.Booked{IntentID: "a", Service: "tire-change", SlotStart: unitSlot,
		WorkflowID: appointment.WorkflowID("demo", "a")}, Found: true, Status: string(workflows.StatusConfirmed),
		Lifecycle: string(lifecycle), Slot: now}
}

// runConversation sends the events one after another and runs the
// conversation until it continues as new.
func runChangeConversation(t *testing.T, f *convFake, start time.Time, events ...conversation.InboundEvent) {
	t.Helper()
	env := newConversationEnv(t, f)
	env.SetStartTime(start)
	for i, ev := range events {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(conversation.SignalInbound, ev) }, time.Duration(i+1)*time.Second)
	}
	env.ExecuteWorkflow(conversation.WorkflowName, unitConversationInput(len(events)))
	nextRunInput(t, env)
}

func voiceEvent(id, text string) conversation.InboundEvent {
	ev := unitEvent(id, text)
	ev.Channel = workflows.ChannelVoice
	return ev
}

func TestSameCancelOnTwoChannelsCancelsOnceAndAnswersOnce(t *testing.T) {
	f := &convFake{
		appointments: []activities.Appointment{changeBooked(workflows.StatusConfirmed, time.Time{})},
		afterChange:  []activities.Appointment{changeBooked(workflows.StatusCancelled, time.Time{})},
		understand: map[string]intent.Result{
			"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"},
			"Ich muss absagen": {Kind: intent.KindCancel, Lang: "de"},
		},
	}
	runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), unitEvent("SMa", "Bitte stornieren"), voiceEvent("CAb", "Ich muss absagen"))
	require.Len(t, f.changes, 1, "one cancel Update")
	require.Empty(t, f.replies, "the booking's one cancellation message is the answer to both")
	require.Empty(t, f.reviews)
}

func TestLateCancelIsConfirmedBeforeTheDepositIsKept(t *testing.T) {
	f := &convFake{
		appointments: []activities.Appointment{changeBooked(workflows.StatusConfirmed, time.Time{})},
		understand: map[string]intent.Result{
			"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"},
			"Ja":               {Kind: intent.KindConfirm, Lang: "de"},
		},
	}
	runChangeConversation(t, f, unitSlot.Add(-2*time.Hour), unitEvent("SMa", "Bitte stornieren"), unitEvent("SMb", "Ja"))
	require.Len(t, f.replies, 1, "the question only")
	require.Contains(t, f.replies[0].Text, "20,00 € bei einer Absage nicht erstattet")
	require.Len(t, f.changes, 1, "cancelled after the yes")
	require.Equal(t, lifecycle.CancelUpdateID("demo", "event:SMb"), f.changes[0].UpdateID)
	require.Empty(t, f.children, "the yes booked nothing")
}

func TestRescheduleWish(t *testing.T) {
	thursday10 := time.Date(2026, 12, 10, 9, 0, 0, 0, time.UTC)
	move := intent.Result{Kind: intent.KindReschedule, Start: thursday10, HasDate: true, HasTime: true, Lang: "de"}
	refused := temporal.NewNonRetryableApplicationError("taken", activities.ErrTypeSlotUnavailable, nil,
		json.RawMessage(`{"alternatives":["2026-12-10T10:00:00Z"]}`))
	confirmed := []activities.Appointment{changeBooked(workflows.StatusConfirmed, time.Time{})}
	cases := []struct {
		name         string
		appointments []activities.Appointment
		changeErr    error
		texts        []string
		wantMoves    int
		wantReply    string // "" means no reply: the booking tells the customer
	}{
		{name: "one confirmed booking: moved", appointments: confirmed, texts: []string{"verschieben Do 10"}, wantMoves: 1},
		{name: "the new time in the next message", appointments: confirmed, texts: []string{"verschieben", "Do 10"}, wantMoves: 1,
			wantReply: "Auf welchen Tag"},
		{name: "taken: alternatives, booking untouched", appointments: confirmed, changeErr: refused, texts: []string{"verschieben Do 10"},
			wantReply: "11:00"},
		{name: "already there", appointments: []activities.Appointment{changeBooked(workflows.StatusConfirmed, thursday10)},
			texts: []string{"verschieben Do 10"}, wantReply: "bereits am"},
		{name: "nothing confirmed to move", texts: []string{"verschieben Do 10"}, wantReply: "keinen bestätigten Termin"},
		{name: "still being booked", appointments: []activities.Appointment{{Booked: confirmed[0].Booked, Found: true, Running: true}},
			texts: []string{"verschieben Do 10"}, wantReply: "noch nicht bestätigt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{appointments: tc.appointments, changeErr: tc.changeErr, understand: map[string]intent.Result{
				"verschieben Do 10": move,
				"verschieben":       {Kind: intent.KindReschedule, Lang: "de", Question: "Auf welchen Tag und welche Uhrzeit sollen wir Ihren Termin verschieben?"},
				"Do 10":             {Kind: intent.KindBook, Start: thursday10, HasDate: true, HasTime: true, Lang: "de", Question: "Welche Leistung?"},
			}}
			var events []conversation.InboundEvent
			for i, text := range tc.texts {
				events = append(events, unitEvent("SM"+string(rune('a'+i)), text))
			}
			runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), events...)
			require.Len(t, f.changes, tc.wantMoves)
			for _, ch := range f.changes {
				require.Equal(t, lifecycle.UpdateReschedule, ch.Update)
				var req lifecycle.RescheduleRequest
				require.NoError(t, json.Unmarshal(ch.Args, &req))
				require.True(t, thursday10.Equal(req.Start), "moved to %v", req.Start)
			}
			require.Empty(t, f.children, "a move books nothing new")
			if tc.wantReply == "" {
				require.Empty(t, f.replies)
				return
			}
			require.Len(t, f.replies, 1)
			require.Contains(t, f.replies[0].Text, tc.wantReply)
		})
	}
}
