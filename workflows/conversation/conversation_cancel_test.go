package conversation_test

// Unit tests of a cancellation wish in ConversationWorkflow, on the
// environment of conversation_test.go.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestConversationCancellationWish: what a "stornieren" does, by what the
// customer has booked.
func TestConversationCancellationWish(t *testing.T) {
	slot := time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)
	farAhead := slot.Add(-7 * 24 * time.Hour)
	appt := func(id string, found, running bool, status, lifecycle workflows.BookingStatus) activities.Appointment {
		return activities.Appointment{Booked: dedup.Booked{IntentID: id, Service: "tire-change", SlotStart: slot,
			WorkflowID: appointment.WorkflowID("demo", id)}, Found: found, Running: running, Status: string(status), Lifecycle: string(lifecycle)}
	}
	booked := appt("a", true, false, workflows.StatusConfirmed, workflows.StatusConfirmed)
	cases := []struct {
		name         string
		now          time.Time
		appointments []activities.Appointment
		findErr      error
		signalErr    error // the cancel signal finds no running appointment
		changeErr    error // the booking's cancel Update fails
		wantCancel   []string
		wantChange   []string // appointments whose booking got the cancel Update
		wantReview   string   // the case's situation; "" means no case
		wantReply    string   // "" means no reply: the booking tells the customer
	}{
		{name: "holding: cancelled at once", now: farAhead, appointments: []activities.Appointment{appt("a", true, true, workflows.StatusHeld, "")},
			wantCancel: []string{appointment.WorkflowID("demo", "a")}, wantReply: "Wir stornieren Ihre noch nicht bestätigte Buchung"},
		{name: "holding, but ended before the signal: review", now: farAhead, appointments: []activities.Appointment{appt("a", true, true, workflows.StatusHeld, "")},
			signalErr: errors.New("workflow not found"), wantReview: "ended_before_cancel_arrived", wantReply: "schon abgeschlossen"},
		{name: "confirmed, inside the free window: the booking cancels and tells", now: farAhead, appointments: []activities.Appointment{booked},
			wantChange: []string{booked.WorkflowID}},
		{name: "confirmed, the appointment closing: the lifecycle cancels", now: farAhead,
			appointments: []activities.Appointment{appt("a", true, true, workflows.StatusConfirmed, workflows.StatusConfirmed)},
			wantChange:   []string{booked.WorkflowID}},
		{name: "lifecycle started, the appointment not yet marked Confirmed: the lifecycle cancels", now: farAhead,
			appointments: []activities.Appointment{appt("a", true, true, workflows.StatusHeld, workflows.StatusConfirmed)},
			wantChange:   []string{booked.WorkflowID}},
		{name: "confirmed, the lifecycle not started yet: review, not a lost signal", now: farAhead,
			appointments: []activities.Appointment{appt("a", true, true, workflows.StatusConfirmed, "")},
			wantReview:   "state_unknown", wantReply: "nicht sicher feststellen"},
		{name: "confirmed, deposit would be kept: asked first", now: slot.Add(-2 * time.Hour), appointments: []activities.Appointment{booked},
			wantReply: "nicht erstattet"},
		{name: "confirmed, but the booking's window says the deposit is kept: asked", now: farAhead, appointments: []activities.Appointment{booked},
			changeErr: temporal.NewNonRetryableApplicationError("kept", lifecycle.ErrTypeDepositWouldBeKept, nil), wantReply: "nicht erstattet"},
		{name: "confirmed, but the slot has begun", now: farAhead, appointments: []activities.Appointment{booked},
			changeErr: temporal.NewNonRetryableApplicationError("begun", lifecycle.ErrTypeNotCancellable, nil), wantReply: "nicht mehr storniert"},
		{name: "confirmed, the booking unreachable: review", now: farAhead, appointments: []activities.Appointment{booked},
			changeErr: temporal.NewNonRetryableApplicationError("gone", activities.ErrTypeBookingGone, nil), wantReview: "ended_before_cancel_arrived", wantReply: "schon abgeschlossen"},
		{name: "cancelled before: said so", now: farAhead, appointments: []activities.Appointment{appt("a", true, false, workflows.StatusConfirmed, workflows.StatusCancelled)},
			wantReply: "bereits storniert"},
		{name: "cancelled before it was confirmed (the same wish on another channel): said so, no case", now: farAhead,
			appointments: []activities.Appointment{appt("a", true, false, workflows.StatusCancelled, "")}, wantReply: "bereits storniert"},
		{name: "ended without a booking is no candidate", now: farAhead, appointments: []activities.Appointment{appt("a", true, false, workflows.StatusRejected, "")},
			wantReview: "no_booking_found", wantReply: "keine offene Buchung"},
		{name: "several: asked which", now: farAhead, appointments: []activities.Appointment{appt("a", true, true, workflows.StatusHeld, ""), booked},
			wantReply: "Welchen möchten Sie absagen"},
		{name: "workflow missing: review", now: farAhead, appointments: []activities.Appointment{appt("a", false, false, "", "")},
			wantReview: "state_unknown", wantReply: "nicht sicher feststellen"},
		{name: "lookup failed: review", now: farAhead, findErr: temporal.NewNonRetryableApplicationError("db down", "Test", nil),
			wantReview: "lookup_failed", wantReply: "nicht prüfen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{appointments: tc.appointments, findErr: tc.findErr, signalErr: tc.signalErr, changeErr: tc.changeErr,
				understand: map[string]intent.Result{"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"}}}
			env := newConversationEnv(t, f)
			env.SetStartTime(tc.now)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(conversation.SignalInbound, unitEvent("SMx", "Bitte stornieren")) }, time.Second)
			env.ExecuteWorkflow(conversation.WorkflowName, unitConversationInput(1))
			nextRunInput(t, env)

			require.Equal(t, tc.wantCancel, f.cancels)
			require.NotEmpty(t, f.findInputs)
			for _, in := range f.findInputs {
				require.True(t, in.WishReceivedAt.Equal(unitReceivedAt), "the lookup leaves out what agents started after the wish came in")
			}
			var changed []string
			for _, ch := range f.changes {
				require.Equal(t, lifecycle.UpdateCancel, ch.Update)
				require.Equal(t, lifecycle.CancelUpdateID("demo", "event:SMx"), ch.UpdateID, "derived from the inbound event")
				changed = append(changed, ch.AppointmentID)
			}
			require.Equal(t, tc.wantChange, changed)
			if tc.wantReview == "" {
				require.Empty(t, f.reviews)
			} else {
				require.Len(t, f.reviews, 1, "exactly one case")
				require.Equal(t, review.ReasonCancellationRequest, f.reviews[0].Reason)
				require.Equal(t, unitConversationID, f.reviews[0].WorkflowID, "the case points at the conversation, which stays")
				require.Equal(t, tc.wantReview, f.reviews[0].Details["situation"])
			}
			if tc.wantReply == "" {
				require.Empty(t, f.replies, "the booking's cancellation message is the answer")
				return
			}
			require.Len(t, f.replies, 1, "one reply")
			require.Contains(t, f.replies[0].Text, tc.wantReply)
		})
	}
}

// TestCancellationWishOutlastsADatabaseOutage: the lookup and the review
// case a cancel needs ask until the database answers, within the
// reconcile bound, instead of giving up after the step budget (about
// 43 s) and asking the customer to write again.
func TestCancellationWishOutlastsADatabaseOutage(t *testing.T) {
	f := &convFake{appointments: []activities.Appointment{{Booked: dedup.Booked{IntentID: "a", Service: "tire-change",
		SlotStart: time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC), WorkflowID: appointment.WorkflowID("demo", "a")},
		Found: true, Running: true, Status: string(workflows.StatusHeld)}},
		understand: map[string]intent.Result{"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"}}}
	env := newConversationEnv(t, f)
	env.SetStartTime(time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC))
	bounds := map[string]time.Duration{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		bounds[info.ActivityType.Name] = info.ScheduleToCloseTimeout
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(conversation.SignalInbound, unitEvent("SMx", "Bitte stornieren")) }, time.Second)
	env.ExecuteWorkflow(conversation.WorkflowName, unitConversationInput(1))
	nextRunInput(t, env)
	require.Equal(t, []string{appointment.WorkflowID("demo", "a")}, f.cancels)
	require.Equal(t, 15*time.Minute, bounds["FindAppointments"], "asked until the database answers, within the reconcile bound")
}

// TestBookingWishOutlastsADatabaseOutage: the dedup decision of a booking
// wish asks until the database answers, within the reconcile bound,
// instead of answering "ein Mitarbeiter meldet sich" with no case after
// the step budget.
func TestBookingWishOutlastsADatabaseOutage(t *testing.T) {
	const wish = "Reifenwechsel am Dienstag um 14 Uhr"
	f := &convFake{understand: map[string]intent.Result{wish: tireChange}}
	env := newConversationEnv(t, f)
	bounds := map[string]time.Duration{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		bounds[info.ActivityType.Name] = info.ScheduleToCloseTimeout
	})
	send(env, []signal{whatsapp(time.Second, "SMa", wish)})
	env.ExecuteWorkflow(conversation.WorkflowName, unitConversationInput(1))
	nextRunInput(t, env)
	require.Len(t, f.children, 1, "the wish is booked")
	require.Equal(t, 15*time.Minute, bounds["DecideDedup"], "asked until the database answers, within the reconcile bound")
}

// TestSameCancelAgainAfterTheBookingEndedIsAnswered: the same cancel wish
// again (a second channel), after the first stopped the booking in flight
// and it ended Cancelled (its intent closed: the lookup finds nothing any
// more), is answered that the booking is cancelled: no case for a person,
// no second signal.
func TestSameCancelAgainAfterTheBookingEndedIsAnswered(t *testing.T) {
	slot := time.Date(2026, 12, 8, 13, 0, 0, 0, time.UTC)
	inFlight := activities.Appointment{Booked: dedup.Booked{IntentID: "a", Service: "tire-change", SlotStart: slot,
		WorkflowID: appointment.WorkflowID("demo", "a")}, Found: true, Running: true, Status: string(workflows.StatusHeld)}
	f := &convFake{finds: [][]activities.Appointment{{inFlight}, {}},
		understand: map[string]intent.Result{"Bitte stornieren": {Kind: intent.KindCancel, Lang: "de"}}}
	env := newConversationEnv(t, f)
	env.SetStartTime(slot.Add(-7 * 24 * time.Hour))
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(conversation.SignalInbound, unitEvent("SMx", "Bitte stornieren")) }, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(conversation.SignalInbound, unitEvent("SMy", "Bitte stornieren")) }, time.Minute)
	env.ExecuteWorkflow(conversation.WorkflowName, unitConversationInput(2))
	nextRunInput(t, env)

	require.Equal(t, []string{appointment.WorkflowID("demo", "a")}, f.cancels, "one cancel signal")
	require.Empty(t, f.reviews, "no case for a person")
	require.Len(t, f.replies, 2)
	require.Contains(t, f.replies[0].Text, "Wir stornieren Ihre noch nicht bestätigte Buchung")
	require.Contains(t, f.replies[1].Text, "ist bereits storniert")
}
