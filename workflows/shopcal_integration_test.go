package workflows_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// withShopCalendars applies the demo shop with each resource's own
// calendar on a real CalDAV server (Radicale), and returns the calendars'
// URLs by resource; missing: the calendars do not exist.
func withShopCalendars(t *testing.T, s convStack, missing bool) map[string]string {
	t.Helper()
	base := testsupport.Radicale(t)
	f, err := tenants.Parse(deploy.DemoFileName, deploy.DemoTenants)
	require.NoError(t, err)
	urls := map[string]string{}
	for i, r := range f.Tenants[0].Resources {
		urls[r.ID] = base + "/werkstatt/" + r.ID + "/" // missing: never made, as a deleted calendar
		if !missing {
			urls[r.ID] = testsupport.MakeCalendar(t, base, "werkstatt", r.ID)
		}
		f.Tenants[0].Resources[i].Calendar = &tenants.ShopCalendar{CalDAV: urls[r.ID], Username: "werkstatt"}
	}
	_, err = tenants.Apply(context.Background(), s.pool, f, tenants.ApplyOptions{})
	require.NoError(t, err)
	return urls
}

// events are the booking events in the shop's calendars: start (UTC,
// RFC 3339) by resource, read as staff's calendar app reads them.
func events(t *testing.T, urls map[string]string, id, customer string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for res, u := range urls {
		ev, found, err := (&shopcal.CalDAV{Calendar: u, Username: "werkstatt"}).Get(context.Background(), id)
		require.NoError(t, err)
		if found {
			out[res] = ev.Start.UTC().Format(time.RFC3339)
			require.Contains(t, ev.Summary, "tire-change", "the service")
			require.NotContains(t, ev.Summary, customer[3:], "no full number: %s", ev.Summary)
		}
	}
	return out
}

// TestBookingFollowsInTheShopsCalendar: a booking made by WhatsApp appears
// once in the shop's own calendar of its resource, with the customer's
// number masked; moved, the one event is at the new slot; cancelled, it
// is gone. Each change is carried over by the booking's lifecycle.
func TestBookingFollowsInTheShopsCalendar(t *testing.T) {
	t.Parallel()
	bookMoveCancelInShopCalendar(t)
}

// TestRecordHistoriesShopCalendar records that lifecycle (versioned:
// publish-booked-first, shop-calendar): booked, moved, cancelled, each
// carried over. Runs with `make histories`.
func TestRecordHistoriesShopCalendar(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s, reference := bookMoveCancelInShopCalendar(t)
	writeHistory(t, fetchHistory(t, context.Background(), s.tc, lifecycle.WorkflowID(reference), ""), "lifecycle-shop-calendar.booking.json")
}

// bookMoveCancelInShopCalendar books, moves and cancels by WhatsApp with
// the shop's calendars on Radicale, checking the event after each step;
// it returns the stack and the booking's reference.
func bookMoveCancelInShopCalendar(t *testing.T) (convStack, string) {
	t.Helper()
	s := newConvStack(t)
	urls := withShopCalendars(t, s, false)
	s.worker(t)
	fake, customer := fakeTwilio(t, s), conversationCustomer()
	in := conversationInput(customer, 0)
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 11))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(fake, customer, "") == 2 })
	var reference, resource string
	var start time.Time
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT reference, resource_id, lower(slot) FROM calendar_reservations
		WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&reference, &resource, &start))
	id := shopcal.EventID("demo", reference)
	testsupport.Eventually(t, 30*time.Second, "the booking in the shop's calendar", func() bool { return len(events(t, urls, id, customer)) == 1 })
	require.Equal(t, map[string]string{resource: start.UTC().Format(time.RFC3339)}, events(t, urls, id, customer), "once, in its resource's calendar")

	thursday := testsupport.Slot(t, time.Thursday, 10)
	s.say(t, in, "SMmove", fmt.Sprintf("Bitte verschieben auf den %d.%d. um 10 Uhr", thursday.Day(), int(thursday.Month())))
	testsupport.Eventually(t, 60*time.Second, "the moved event", func() bool {
		ev := events(t, urls, id, customer)
		return len(ev) == 1 && ev[firstKey(ev)] == thursday.UTC().Format(time.RFC3339)
	})

	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the event removed", func() bool {
		return messagesTo(fake, customer, "storniert") == 1 && len(events(t, urls, id, customer)) == 0
	})
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
	return s, reference
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestShopCalendarThatRefusesOpensACase: a shop's calendar that refuses
// for good (deleted, or a wrong URL) does not hold up the booking, which
// the customer is told as always, and staff learn of it: a review case
// names the booking that is missing from their calendar.
func TestShopCalendarThatRefusesOpensACase(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	withShopCalendars(t, s, true)
	s.worker(t)
	fake, customer := fakeTwilio(t, s), conversationCustomer()
	s.say(t, conversationInput(customer, 0), "SMbook", "Reifenwechsel "+slotText(t, 13))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(fake, customer, "bestätigt") == 1 })
	t.Cleanup(func() {
		if t.Failed() {
			rows, _ := s.pool.Query(context.Background(), `SELECT reason || ' ' || details::text FROM review_cases`)
			for rows.Next() {
				var c string
				_ = rows.Scan(&c)
				t.Log("case: ", c)
			}
			rows.Close()
		}
	})
	testsupport.Eventually(t, 60*time.Second, "a case for the shop's calendar", func() bool {
		return s.count(t, `SELECT count(*) FROM review_cases WHERE reason = 'shop_calendar' AND details->>'booking_id' IN
			(SELECT booking_id FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed')`, customer) == 1
	})
}
