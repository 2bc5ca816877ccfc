package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows"
)

// TestMatrix20FrontDeskBookingThenAgentReplays proves failure-matrix item
// 20 (a person books by hand, then the agent replays the wish; rule 16 of
// docs/design.md): the front desk books a customer's tire change on bay-1
// through the calendar API under its own reference, with the number typed
// nationally.
// The agent's saga for the same customer, service and time (bay-2 is free)
// is refused by the calendar's constraint and ends AlreadyBooked, linked to
// the front desk's booking: 1 active reservation, no payment intent, one
// "already booked" message row. A deliberate second booking (a reviewer's
// "separate", a second car) is booked: 2 reservations.
func TestMatrix20FrontDeskBookingThenAgentReplays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	ctx := context.Background()
	req := request(t, "+4915112345678", time.Wednesday, 10)

	desk := calendar.NewClient(e.calendar.URL, config.DefaultAPIToken)
	h, err := desk.CreateHold(ctx, "desk-hold", calendar.HoldRequest{
		ResourceID: "bay-1", Service: req.Service, Start: req.SlotStart, Customer: "0151 1234 5678", Reference: "frontdesk:" + req.IntentID})
	require.NoError(t, err)
	booking, err := desk.ConfirmHold(ctx, "desk-confirm", h.ID)
	require.NoError(t, err)

	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusAlreadyBooked, st.Status, st.Reason)
	require.Equal(t, booking.ID, st.ExistingBooking)
	require.Equal(t, "frontdesk:"+req.IntentID, st.ExistingReference)
	require.Empty(t, st.BookingID, "the front desk's booking is linked, not taken over (a compensation would cancel it)")
	require.Equal(t, effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{}, Messages: 1}, e.effects(t, req.Customer, req.SlotStart),
		"the customer at the slot: the front desk's booking, no payment intent, one message (the agent's)")
	require.Equal(t, 1, e.countOf(t, `SELECT count(*) FROM calendar_reservations WHERE customer = '+4915112345678' AND status IN ('held', 'confirmed')`))
	require.Equal(t, 1, e.countOf(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed' AND booking_id = $1`, booking.ID),
		"the front desk's booking stands")
	require.Zero(t, e.countOf(t, `SELECT count(*) FROM payment_intents`), "nothing charged")
	require.Equal(t, 1, e.countOf(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'already_booked' AND reference = $1 AND body LIKE '%' || $2 || '%'`,
		r.GetID(), booking.ID), "one message names the existing booking")
	require.Zero(t, e.countOf(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation'`), "no confirmation of a second booking")

	second := req
	second.IntentID += "-second-car"
	second.DeliberateSecond = true
	_, st2 := run(t, e, second)
	require.Equal(t, workflows.StatusConfirmed, st2.Status, st2.Reason)
	require.Equal(t, effects{Reservations: map[string]int{"confirmed": 2}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 2},
		e.effects(t, req.Customer, req.SlotStart), "the desk's booking and the second car's, its deposit; the earlier message and its confirmation")
	require.Equal(t, 2, e.countOf(t, `SELECT count(*) FROM calendar_reservations WHERE customer = '+4915112345678' AND status = 'confirmed'`))
	require.Equal(t, 2, e.countOf(t, `SELECT count(DISTINCT resource_id) FROM calendar_reservations WHERE status = 'confirmed'`))
}
