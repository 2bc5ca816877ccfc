package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// putStaffEvent enters an appointment in a resource's calendar the way
// a calendar app does.
func putStaffEvent(t *testing.T, calendarURL, uid string, start, end time.Time) {
	t.Helper()
	const layout = "20060102T150405Z"
	testsupport.StaffEvent(t, calendarURL, uid, "BEGIN:VEVENT\nUID:"+uid+"\nDTSTAMP:20260101T000000Z\nDTSTART:"+start.UTC().Format(layout)+
		"\nDTEND:"+end.UTC().Format(layout)+"\nSUMMARY:Ölwechsel Stammkunde\nEND:VEVENT")
}

// TestSlotStaffTookIsNotBookedByTheAgent: the front desk entered an
// appointment in every bay's own calendar a moment ago, before any sweep
// of the mirror: the hold step reads the calendars again, so the customer
// asking for that time is told it is taken and offered others, and
// nothing is held or booked there.
func TestSlotStaffTookIsNotBookedByTheAgent(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	urls := withShopCalendars(t, s, false)
	s.worker(t)
	wished := testsupport.Slot(t, time.Tuesday, 15)
	for res, u := range urls {
		putStaffEvent(t, u, "frontdesk-"+res, wished.Add(-30*time.Minute), wished.Add(time.Hour))
	}
	fake, customer := fakeTwilio(t, s), conversationCustomer()
	s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 15))
	testsupport.Eventually(t, 60*time.Second, "told the slot is taken, with others", func() bool {
		return messagesTo(fake, customer, "schon vergeben. Frei wären") == 1
	})
	require.Zero(t, messagesTo(fake, customer, "bestätigt"))
	require.Zero(t, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND slot && tstzrange($2, $3)`,
		customer, wished.Add(-30*time.Minute), wished.Add(time.Hour)), "nothing held or booked over staff's appointment")
}

// TestStaffEventOverABookingOpensOneCase: the agent booked a slot, then
// the front desk entered an appointment over it in the bay's calendar.
// The mirror's sweeps find the conflict: one calendar_conflict case names
// the booking and the event however often they run; the booking stays
// and the customer is told nothing new; the bay is offered to no one
// else there.
func TestStaffEventOverABookingOpensOneCase(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	urls := withShopCalendars(t, s, false)
	s.worker(t)
	fake, customer := fakeTwilio(t, s), conversationCustomer()
	s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 14))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(fake, customer, "bestätigt") == 1 })
	var bookingID, resource string
	var start time.Time
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT booking_id, resource_id, lower(slot) FROM calendar_reservations
		WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&bookingID, &resource, &start))
	putStaffEvent(t, urls[resource], "frontdesk-over", start, start.Add(time.Hour))
	sent := s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1`, customer)

	mirror := stack.NewActivities(s.cfg, s.pool, testsupport.Tenants(t, s.pool), s.tc).ShopMirror
	for range 2 {
		require.NoError(t, mirror.Sweep(context.Background()))
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM review_cases WHERE reason = 'calendar_conflict' AND details->>'booking_id' = $1
		AND details->>'event_uid' = 'frontdesk-over'`, bookingID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE booking_id = $1 AND status = 'confirmed'`, bookingID), "the booking stands")
	require.Equal(t, sent, s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient = $1`, customer), "the customer is told nothing new")

	acts := stack.NewActivities(s.cfg, s.pool, testsupport.Tenants(t, s.pool), s.tc)
	c, err := acts.Calendar("demo")
	require.NoError(t, err)
	slots, err := c.Availability(context.Background(), "tire-change", resource, start, start.Add(2*time.Hour))
	require.NoError(t, err)
	for _, sl := range slots {
		require.False(t, sl.Start.Before(start.Add(time.Hour)), "nothing offered under staff's appointment: %v", sl.Start)
	}
}
