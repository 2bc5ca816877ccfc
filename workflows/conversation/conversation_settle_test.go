package conversation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestCancelWishBetweenConfirmationAndLifecycleGoesToTheLifecycle: a
// cancel wish that meets a booking confirmed a moment ago, before its
// lifecycle takes changes, is carried out by the lifecycle once it does,
// not handed to a person (#48 item 6).
func TestCancelWishBetweenConfirmationAndLifecycleGoesToTheLifecycle(t *testing.T) {
	booked := changeBooked(workflows.StatusConfirmed, time.Time{})
	closing := booked // the appointment at its last step: confirmed, no lifecycle yet
	closing.Running, closing.Lifecycle = true, ""
	reserving := closing // the appointment still booking (asking the calendar to confirm)
	reserving.Status = string(workflows.StatusConfirming)
	closed := errors.New("unknown external workflow execution")
	cases := []struct {
		name      string
		finds     [][]activities.Appointment
		signalErr error
		wantFinds int
	}{
		{name: "confirmed, its lifecycle not started yet", finds: [][]activities.Appointment{{closing}, {closing}, {booked}}, wantFinds: 3},
		{name: "the appointment closed before the cancel signal reached it", finds: [][]activities.Appointment{{reserving}, {booked}},
			signalErr: closed, wantFinds: 2},
		{name: "closed before the signal, the lifecycle a moment later", finds: [][]activities.Appointment{{reserving}, {closing}, {booked}},
			signalErr: closed, wantFinds: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{finds: tc.finds, signalErr: tc.signalErr,
				understand: map[string]intent.Result{"Ich muss absagen": {Kind: intent.KindCancel, Lang: "de"}}}
			runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), unitEvent("SMa", "Ich muss absagen"))
			require.Empty(t, f.reviews, "no case for a person")
			require.Len(t, f.changes, 1, "the lifecycle's cancel Update")
			require.Equal(t, lifecycle.UpdateCancel, f.changes[0].Update)
			require.Empty(t, f.replies, "the booking's cancellation message is the answer")
			require.Equal(t, tc.wantFinds, f.found)
		})
	}
}

// TestCancelWishWhoseLifecycleNeverAppearsGoesToAPerson: past the bound a
// booking confirmed without a lifecycle is a person's case, as before.
func TestCancelWishWhoseLifecycleNeverAppearsGoesToAPerson(t *testing.T) {
	closing := changeBooked(workflows.StatusConfirmed, time.Time{})
	closing.Running, closing.Lifecycle = true, ""
	f := &convFake{finds: [][]activities.Appointment{{closing}},
		understand: map[string]intent.Result{"Ich muss absagen": {Kind: intent.KindCancel, Lang: "de"}}}
	runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), unitEvent("SMa", "Ich muss absagen"))
	require.Len(t, f.reviews, 1)
	require.Equal(t, review.ReasonCancellationRequest, f.reviews[0].Reason)
	require.Empty(t, f.changes)
	require.Len(t, f.replies, 1, "told a person looks")
	require.Greater(t, f.found, 3, "looked again before giving up")
}

// TestMoveWishBetweenConfirmationAndLifecycleMovesTheBooking: a move
// asked for a moment after the confirmation, or while the booking is
// still confirming (the confirmation may already be at the customer),
// waits for the lifecycle instead of telling the customer there is no
// confirmed booking or that it is not confirmed yet.
func TestMoveWishBetweenConfirmationAndLifecycleMovesTheBooking(t *testing.T) {
	booked := changeBooked(workflows.StatusConfirmed, time.Time{})
	closing := booked
	closing.Running, closing.Lifecycle = true, ""
	reserving := closing
	reserving.Status = string(workflows.StatusConfirming)
	cases := []struct {
		name  string
		finds [][]activities.Appointment
	}{
		{name: "confirmed, its lifecycle not started yet", finds: [][]activities.Appointment{{closing}, {booked}}},
		{name: "still confirming", finds: [][]activities.Appointment{{reserving}, {reserving}, {closing}, {booked}}},
		{name: "confirming, then its lifecycle", finds: [][]activities.Appointment{{reserving}, {booked}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &convFake{finds: tc.finds, understand: map[string]intent.Result{"verschieben": moveWish}}
			runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), unitEvent("SMa", "verschieben"))
			require.Empty(t, f.reviews)
			require.Len(t, f.changes, 1, "the lifecycle's reschedule Update")
			require.Equal(t, lifecycle.UpdateReschedule, f.changes[0].Update)
			require.Empty(t, f.replies, "the booking's message about the move is the answer")
			require.Equal(t, len(tc.finds), f.found)
		})
	}
}

// TestMoveWishWhileTheConfirmationHangsIsToldToWaitForIt: a booking still
// confirming past the bound (the calendar down) is not confirmed yet, and
// the customer is told so, once, as before the wait.
func TestMoveWishWhileTheConfirmationHangsIsToldToWaitForIt(t *testing.T) {
	reserving := changeBooked(workflows.StatusConfirming, time.Time{})
	reserving.Running, reserving.Lifecycle, reserving.Status = true, "", string(workflows.StatusConfirming)
	f := &convFake{finds: [][]activities.Appointment{{reserving}}, understand: map[string]intent.Result{"verschieben": moveWish}}
	runChangeConversation(t, f, unitSlot.Add(-72*time.Hour), unitEvent("SMa", "verschieben"))
	require.Empty(t, f.reviews)
	require.Empty(t, f.changes)
	require.Len(t, f.replies, 1)
	require.Contains(t, f.replies[0].Text, "noch nicht bestätigt")
	require.Greater(t, f.found, 3, "looked again before answering")
}

// moveWish is "verschieben auf Donnerstag 10 Uhr", the day after unitSlot.
var moveWish = intent.Result{Kind: intent.KindReschedule, Start: unitSlot.Add(24 * time.Hour), HasDate: true, HasTime: true, Lang: "de"}
