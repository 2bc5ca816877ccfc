package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestCancelBookingActsOnce: an agent cancels a confirmed booking three
// times at once and once more later (by booking ID): one cancelled booking
// in the calendar, one refund at the payment API, one cancellation message
// at the customer (counted at the fake Twilio), and four identical answers.
func TestCancelBookingActsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	var booked agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{
		"customer": customer, "service": "tire-change", "start": testsupport.Slot(t, time.Friday, 9).Format(time.RFC3339),
	}, &booked))
	require.Equal(t, agent.StatusConfirmed, booked.Status, booked.Message)
	testsupport.Eventually(t, 30*time.Second, "the booking's lifecycle started", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = 'confirmation'`, booked.WorkflowID) == 1
	})

	answers := make([]agent.ChangeOutput, 4)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if msg := call(t, s, agent.ToolCancelBooking, map[string]any{"id": booked.WorkflowID, "reason": "verhindert"}, &answers[i]); msg != "" {
				t.Errorf("cancel %d: tool error %s", i, msg)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, call(t, s, agent.ToolCancelBooking, map[string]any{"id": booked.BookingID}, &answers[3]))
	require.Equal(t, agent.StatusCancelled, answers[0].Status, answers[0].Message)
	require.Equal(t, string(lifecycle.DepositRefunded), answers[0].Deposit)
	for i := 1; i < len(answers); i++ {
		require.Equal(t, answers[0], answers[i], "answer %d", i)
	}
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'cancelled'`, booked.WorkflowID))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id
		WHERE p.booking_reference = $1`, booked.WorkflowID), "one refund")
	require.Len(t, testsupport.Delivered(t, e.pool, e.twilio, booked.WorkflowID, customer, "ist storniert"), 1,
		"one cancellation message reached the customer")
	require.Len(t, testsupport.Delivered(t, e.pool, e.twilio, booked.WorkflowID, customer, "ist bestätigt"), 1,
		"one confirmation reached the customer")
}

// TestCancelBookingRefusesWhatCannotBeCancelled: an unknown booking is a
// tool error; moving is not offered yet and changes nothing.
func TestCancelBookingRefusesWhatCannotBeCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	cases := []struct {
		name string
		tool agent.ToolName
		args map[string]any
		want string
	}{
		{"unknown booking", agent.ToolCancelBooking, map[string]any{"id": "appointment:demo:nosuchbooking"}, "not confirmed yet"},
		{"another tenant's prefix", agent.ToolCancelBooking, map[string]any{"id": "appointment:other:x"}, "no booking with this id"},
		{"reschedule", agent.ToolRescheduleBooking, map[string]any{"id": "appointment:demo:x", "start": "2030-01-01T10:00:00Z"}, "not available yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out agent.ChangeOutput
			msg := call(t, s, tc.tool, tc.args, &out)
			if msg == "" {
				msg = out.Message
				require.Equal(t, agent.StatusNotChanged, out.Status)
			}
			require.Contains(t, msg, tc.want)
		})
	}
}

// TestBookAgainAfterCancelIsANewBooking: the tool description's advice
// "cancel_booking, then book_appointment" works. After a cancel the same
// customer, service and slot is a new booking (its own workflow, a
// confirmed calendar row beside the cancelled one, a second deposit), and
// get_booking answers the first one as cancelled, by either ID.
func TestBookAgainAfterCancelIsANewBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	slot := testsupport.Slot(t, time.Thursday, 11)
	wish := map[string]any{"customer": customer, "service": "tire-change", "start": slot.Format(time.RFC3339)}
	var first, again agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &first))
	require.Equal(t, agent.StatusConfirmed, first.Status, first.Message)
	var cancelled agent.ChangeOutput
	require.Empty(t, call(t, s, agent.ToolCancelBooking, map[string]any{"id": first.WorkflowID}, &cancelled))
	require.Equal(t, agent.StatusCancelled, cancelled.Status, cancelled.Message)

	require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &again))
	require.Equal(t, agent.StatusConfirmed, again.Status, again.Message)
	require.NotEqual(t, first.WorkflowID, again.WorkflowID, "a new booking, not the cancelled one")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed' AND lower(slot) = $2`, customer, slot.UTC()))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'cancelled' AND lower(slot) = $2`, customer, slot.UTC()))
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM payment_intents WHERE booking_reference IN ($1, $2) AND status = 'succeeded'`, first.WorkflowID, again.WorkflowID),
		"each booking took its own deposit")

	for _, id := range []string{first.WorkflowID, first.BookingID} {
		var got agent.BookingAnswer
		require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": id}, &got))
		require.Equal(t, agent.StatusCancelled, got.Status, "get_booking %s: %s", id, got.Message)
	}
	var now agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": again.WorkflowID}, &now))
	require.Equal(t, agent.StatusConfirmed, now.Status, now.Message)
}

// TestBookTheOldSlotAfterAMoveIsANewBooking: a booking moved from A to B
// (by chat, the API or staff) no longer holds A. The agent's same wish
// for A afterwards, without an operation ID, is a new booking of A, not
// the replayed answer "confirmed" naming the booking that now sits at B
// (seen in the drill: the customer was told A was booked and nothing
// was). Both slots end with a confirmed row of the customer's.
func TestBookTheOldSlotAfterAMoveIsANewBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	a, b := testsupport.Slot(t, time.Thursday, 11), testsupport.Slot(t, time.Thursday, 14)
	wish := map[string]any{"customer": customer, "service": "tire-change", "start": a.Format(time.RFC3339)}
	var first, again agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &first))
	require.Equal(t, agent.StatusConfirmed, first.Status, first.Message)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	moved, err := lifecycle.Reschedule(ctx, e.tc, first.WorkflowID, "test-move-"+customer, lifecycle.RescheduleRequest{Start: b})
	require.NoError(t, err)
	require.True(t, moved.SlotStart.Equal(b), "moved to %s", moved.SlotStart)

	require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &again))
	if again.Status == agent.StatusNeedsConfirmation {
		// Within the dedup window the booking at B makes A a possible
		// second appointment: the agent asks, the customer says yes.
		require.Contains(t, again.Message, first.BookingID, "the question names the booking at B")
		wish["confirm_second"] = true
		require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &again))
	}
	require.Equal(t, agent.StatusConfirmed, again.Status, again.Message)
	require.NotEqual(t, first.WorkflowID, again.WorkflowID, "a new booking, not the moved one")
	for _, slot := range []time.Time{a, b} {
		require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed' AND lower(slot) = $2`, customer, slot.UTC()),
			"one confirmed booking at %s", slot)
	}
}
