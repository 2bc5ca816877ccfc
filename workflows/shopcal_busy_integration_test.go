package workflows_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestSlotStaffTookIsNotBookedByTheAgent: the front desk entered an
// appointment in every bay's own calendar a moment ago, before any sweep
// of the mirror: the hold step reads the calendars again, so the customer
// asking for that time is told it is taken and offered others, and
// nothing is held or booked there.
func TestSlotStaffTookIsNotBookedByTheAgent(t *testing.T) {
	t.Parallel()
	eachProvider(t, func(t *testing.T, s *convStack, cals shopCalendars) {
		s.worker(t)
		wished := testsupport.Slot(t, time.Tuesday, 15)
		for _, res := range cals.resources() {
			cals.staffEvent(t, res, "frontdesk"+strings.ReplaceAll(res, "-", ""), wished.Add(-30*time.Minute), wished.Add(time.Hour))
		}
		fake, customer := fakeTwilio(t, *s), conversationCustomer()
		s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 15))
		testsupport.Eventually(t, 60*time.Second, "told the slot is taken, with others", func() bool {
			return messagesTo(fake, customer, "schon vergeben. Frei wären") == 1
		})
		require.Zero(t, messagesTo(fake, customer, "bestätigt"))
		require.Zero(t, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND slot && tstzrange($2, $3)`,
			customer, wished.Add(-30*time.Minute), wished.Add(time.Hour)), "nothing held or booked over staff's appointment")
	})
}

// TestStaffEventOverABookingOpensOneCase: the agent booked a slot, then
// the front desk entered an appointment over it in the bay's calendar.
// The mirror's sweeps find the conflict: one calendar_conflict case names
// the booking and the event however often they run; the booking stays
// and the customer is told nothing new; the bay is offered to no one
// else there.
func TestStaffEventOverABookingOpensOneCase(t *testing.T) {
	t.Parallel()
	for name, connect := range providers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			staffOverABooking(t, connect)
		})
	}
}

func staffOverABooking(t *testing.T, connect func(*testing.T, *convStack) shopCalendars) {
	s := newConvStack(t)
	cals := connect(t, &s)
	s.worker(t)
	fake, customer := fakeTwilio(t, s), conversationCustomer()
	s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 14))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(fake, customer, "bestätigt") == 1 })
	var bookingID, resource string
	var start time.Time
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT booking_id, resource_id, lower(slot) FROM calendar_reservations
		WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&bookingID, &resource, &start))
	cals.staffEvent(t, resource, "frontdeskover", start, start.Add(time.Hour))
	sent := s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1`, customer)

	acts := stack.NewActivities(s.cfg, s.pool, testsupport.Tenants(t, s.pool), s.tc)
	for range 2 {
		require.NoError(t, acts.ShopMirror.Sweep(context.Background()))
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM review_cases WHERE reason = 'calendar_conflict' AND details->>'booking_id' = $1
		AND details->>'event_uid' = 'frontdeskover'`, bookingID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE booking_id = $1 AND status = 'confirmed'`, bookingID), "the booking stands")
	require.Equal(t, sent, s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1`, customer), "the customer is told nothing new")

	c, err := acts.Calendar("demo")
	require.NoError(t, err)
	slots, err := c.Availability(context.Background(), "tire-change", resource, start, start.Add(2*time.Hour))
	require.NoError(t, err)
	for _, sl := range slots {
		require.False(t, sl.Start.Before(start.Add(time.Hour)), "nothing offered under staff's appointment: %v", sl.Start)
	}
}

// TestCalendarTheMirrorCannotReadOpensACase: calendars that refuse for
// good (here: deleted) are not silence: a sweep opens one
// calendar_connection case per resource, however often it runs that day,
// for a person to reconnect them.
func TestCalendarTheMirrorCannotReadOpensACase(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	cals := withShopCalendars(t, &s, true)
	acts := stack.NewActivities(s.cfg, s.pool, testsupport.Tenants(t, s.pool), s.tc)
	for range 2 {
		require.Error(t, acts.ShopMirror.Sweep(context.Background()))
	}
	for _, res := range cals.resources() {
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM review_cases WHERE reason = 'calendar_connection' AND tenant_id = 'demo'
			AND details->>'resource_id' = $1 AND status = 'open'`, res), res)
	}
}
