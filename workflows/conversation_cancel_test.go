package workflows_test

// Unit tests of a cancellation wish in ConversationWorkflow, on the
// environment of conversation_test.go.

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

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
		signalErr    error // the cancel signal finds no running appointment
		wantCancel   []string
		wantReview   string // the case's situation; "" means no case
		wantReply    string
	}{
		{"holding: cancelled at once", []activities.Appointment{appt("a", true, true, workflows.StatusHeld)},
			nil, nil, []string{workflows.AppointmentWorkflowID("demo", "a")}, "", "Wir stornieren Ihre noch nicht bestätigte Buchung"},
		{"holding, but ended before the signal: review", []activities.Appointment{appt("a", true, true, workflows.StatusHeld)},
			nil, errors.New("workflow not found"), nil, "ended_before_cancel_arrived", "schon abgeschlossen"},
		{"confirmed: review", []activities.Appointment{appt("a", true, false, workflows.StatusConfirmed)},
			nil, nil, nil, "confirmed", "bereits bestätigt"},
		{"ended without a booking is no candidate", []activities.Appointment{appt("a", true, false, workflows.StatusRejected)},
			nil, nil, nil, "no_booking_found", "keine offene Buchung"},
		{"several: review", []activities.Appointment{appt("a", true, true, workflows.StatusHeld), appt("b", true, false, workflows.StatusConfirmed)},
			nil, nil, nil, "several_candidates", "mehrere Buchungen"},
		{"workflow missing: review", []activities.Appointment{appt("a", false, false, "")},
			nil, nil, nil, "state_unknown", "nicht sicher feststellen"},
		{"lookup failed: review", nil, temporal.NewNonRetryableApplicationError("db down", "Test", nil),
			nil, nil, "lookup_failed", "nicht prüfen"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{appointments: tc.appointments, findErr: tc.findErr, signalErr: tc.signalErr,
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
