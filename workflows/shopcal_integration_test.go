package workflows_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// shopCalendars are the demo shop's resources' own calendars at one
// provider, as the test reads and writes them from the staff's side.
type shopCalendars interface {
	// events are the booking events id in the calendars: start (UTC,
	// RFC 3339) by resource, checked to show the service and no full
	// number.
	events(t *testing.T, id, customer string) map[string]string
	// staffEvent enters an appointment in a resource's calendar as a
	// person's calendar app does.
	staffEvent(t *testing.T, resource, uid string, start, end time.Time)
	resources() []string
	// copies counts the events of booking id in all the calendars: more
	// than one is a duplicate.
	copies(t *testing.T, id string) int
	// route sends the worker's calls to the provider through wrap(base),
	// a proxy in front of the provider's base URL.
	route(t *testing.T, s *convStack, wrap func(base string) string)
}

// withShopCalendars applies the demo shop with each resource's own
// calendar on a real CalDAV server (Radicale), and returns the calendars;
// missing: the calendars do not exist.
func withShopCalendars(t *testing.T, s *convStack, missing bool) shopCalendars {
	t.Helper()
	base := testsupport.Radicale(t)
	urls := caldavCalendars{base: base, urls: map[string]string{}}
	applyCalendars(t, s, func(r tenants.Resource) *tenants.ShopCalendar {
		urls.urls[r.ID] = base + "/werkstatt/" + r.ID + "/" // missing: never made, as a deleted calendar
		if !missing {
			urls.urls[r.ID] = testsupport.MakeCalendar(t, base, "werkstatt", r.ID)
		}
		return &tenants.ShopCalendar{CalDAV: urls.urls[r.ID], Username: "werkstatt"}
	})
	return urls
}

// withGoogleCalendars applies the demo shop with each resource's own
// Google calendar at a fake of Google (Calendar API v3 and OAuth), which
// the worker reaches as it reaches Google, with the shop's refresh tokens.
func withGoogleCalendars(t *testing.T, s *convStack) shopCalendars {
	t.Helper()
	fake := shopcal.NewFakeGoogle("bookonce-test.apps.googleusercontent.com", "app-secret")
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	s.cfg.GoogleClientID, s.cfg.GoogleClientSecret, s.cfg.GoogleAPIURL = fake.ClientID, fake.ClientSecret, srv.URL
	s.cfg.ShopCalendarSecrets = map[string]string{}
	cals := googleCalendars{fake: fake, ids: map[string]string{}}
	applyCalendars(t, s, func(r tenants.Resource) *tenants.ShopCalendar {
		cals.ids[r.ID] = "werkstatt-" + r.ID + "@group.calendar.google.com"
		s.cfg.ShopCalendarSecrets["google-"+r.ID] = fake.AddCalendar(cals.ids[r.ID])
		return &tenants.ShopCalendar{Google: cals.ids[r.ID], Secret: "google-" + r.ID}
	})
	return cals
}

// withMicrosoftCalendars applies the demo shop with each resource's own
// calendar in a Microsoft 365 mailbox at a fake of Microsoft Graph and
// the identity platform, which the worker reaches as it reaches
// Microsoft, with bookonce's app registration and the shop's consent.
func withMicrosoftCalendars(t *testing.T, s *convStack) shopCalendars {
	t.Helper()
	fake := shopcal.NewFakeGraph("0b4f9c1e-bookonce-test", "app-secret")
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	s.cfg.MicrosoftClientID, s.cfg.MicrosoftClientSecret, s.cfg.MicrosoftAPIURL = fake.ClientID, fake.ClientSecret, srv.URL
	const tenant, mailbox = "7c1e2a4b-0000-4000-8000-00000000abcd", "werkstatt@autohaus.example"
	cals := graphCalendars{fake: fake, mailbox: mailbox, ids: map[string]string{}}
	applyCalendars(t, s, func(r tenants.Resource) *tenants.ShopCalendar {
		cals.ids[r.ID] = "AAMkAD" + strings.ReplaceAll(r.ID, "-", "")
		fake.AddCalendar(tenant, mailbox, cals.ids[r.ID])
		return &tenants.ShopCalendar{Microsoft: mailbox, EntraTenant: tenant, CalendarID: cals.ids[r.ID]}
	})
	return cals
}

// applyCalendars applies the demo shop with the calendar cal gives each
// resource.
func applyCalendars(t *testing.T, s *convStack, cal func(tenants.Resource) *tenants.ShopCalendar) {
	t.Helper()
	f, err := tenants.Parse(deploy.DemoFileName, deploy.DemoTenants)
	require.NoError(t, err)
	for i, r := range f.Tenants[0].Resources {
		f.Tenants[0].Resources[i].Calendar = cal(r)
	}
	_, err = tenants.Apply(context.Background(), s.pool, f, tenants.ApplyOptions{})
	require.NoError(t, err)
}

// caldavCalendars are the calendars' URLs by resource on Radicale at
// base.
type caldavCalendars struct {
	base string
	urls map[string]string
}

func (c caldavCalendars) events(t *testing.T, id, customer string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for res, u := range c.urls {
		ev, found, err := (&shopcal.CalDAV{Calendar: u, Username: "werkstatt"}).Get(context.Background(), id)
		require.NoError(t, err)
		if found {
			out[res] = checkedStart(t, ev.Event, customer)
		}
	}
	return out
}

func (c caldavCalendars) staffEvent(t *testing.T, resource, uid string, start, end time.Time) {
	t.Helper()
	const layout = "20060102T150405Z"
	testsupport.StaffEvent(t, c.urls[resource], uid, "BEGIN:VEVENT\nUID:"+uid+"\nDTSTAMP:20260101T000000Z\nDTSTART:"+start.UTC().Format(layout)+
		"\nDTEND:"+end.UTC().Format(layout)+"\nSUMMARY:Ölwechsel Stammkunde\nEND:VEVENT")
}

func (c caldavCalendars) resources() []string { return slices.Sorted(maps.Keys(c.urls)) }

// copies: an object's name is the event's ID, so a calendar holds it once
// at most; more than one calendar holding it is the duplicate.
func (c caldavCalendars) copies(t *testing.T, id string) int {
	return len(c.events(t, id, "+490000000000"))
}

func (c caldavCalendars) route(t *testing.T, s *convStack, wrap func(string) string) {
	t.Helper()
	through := wrap(c.base)
	applyCalendars(t, s, func(r tenants.Resource) *tenants.ShopCalendar {
		return &tenants.ShopCalendar{CalDAV: through + strings.TrimPrefix(c.urls[r.ID], c.base), Username: "werkstatt"}
	})
}

// googleCalendars are the calendars at the fake Google, their IDs by
// resource.
type googleCalendars struct {
	fake *shopcal.FakeGoogle
	ids  map[string]string
}

func (g googleCalendars) events(t *testing.T, id, customer string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for res, cal := range g.ids {
		ev, ok := g.fake.Event(cal, id)
		if !ok || ev.Status == "cancelled" {
			continue
		}
		start, err := time.Parse(time.RFC3339, ev.Start.DateTime)
		require.NoError(t, err)
		out[res] = checkedStart(t, shopcal.Event{Summary: ev.Summary, Start: start}, customer)
	}
	return out
}

func (g googleCalendars) staffEvent(t *testing.T, resource, uid string, start, end time.Time) {
	t.Helper()
	g.fake.Put(g.ids[resource], gcal.Event{Id: uid, Summary: "Ölwechsel Stammkunde",
		Start: &gcal.EventDateTime{DateTime: start.UTC().Format(time.RFC3339)}, End: &gcal.EventDateTime{DateTime: end.UTC().Format(time.RFC3339)}})
}

func (g googleCalendars) resources() []string { return slices.Sorted(maps.Keys(g.ids)) }

// copies: Google keys events by the ID bookonce chose, so a calendar
// holds it once at most.
func (g googleCalendars) copies(t *testing.T, id string) int {
	return len(g.events(t, id, "+490000000000"))
}

func (g googleCalendars) route(_ *testing.T, s *convStack, wrap func(string) string) {
	s.cfg.GoogleAPIURL = wrap(s.cfg.GoogleAPIURL)
}

// graphCalendars are the mailbox's calendars at the fake Graph, their IDs
// by resource.
type graphCalendars struct {
	fake    *shopcal.FakeGraph
	mailbox string
	ids     map[string]string
}

func (g graphCalendars) events(t *testing.T, id, customer string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for res, cal := range g.ids {
		for _, ev := range g.fake.Events(g.mailbox, cal) {
			if ev.TransactionID != id {
				continue
			}
			start, err := time.Parse("2006-01-02T15:04:05.9999999", ev.Start.DateTime)
			require.NoError(t, err)
			out[res] = checkedStart(t, shopcal.Event{Summary: ev.Subject, Start: start}, customer)
		}
	}
	return out
}

func (g graphCalendars) staffEvent(t *testing.T, resource, uid string, start, end time.Time) {
	t.Helper()
	const layout = "2006-01-02T15:04:05.0000000"
	g.fake.Put(g.mailbox, g.ids[resource], shopcal.GraphEvent{ID: uid, Subject: "Ölwechsel Stammkunde",
		Start: shopcal.GraphTime{DateTime: start.UTC().Format(layout), TimeZone: "UTC"}, End: shopcal.GraphTime{DateTime: end.UTC().Format(layout), TimeZone: "UTC"}})
}

func (g graphCalendars) resources() []string { return slices.Sorted(maps.Keys(g.ids)) }

// copies: Graph chooses IDs, so a second create would be a second event
// with the same transactionId.
func (g graphCalendars) copies(_ *testing.T, id string) int {
	n := 0
	for _, cal := range g.ids {
		for _, ev := range g.fake.Events(g.mailbox, cal) {
			if ev.TransactionID == id {
				n++
			}
		}
	}
	return n
}

func (g graphCalendars) route(_ *testing.T, s *convStack, wrap func(string) string) {
	s.cfg.MicrosoftAPIURL = wrap(s.cfg.MicrosoftAPIURL)
}

// checkedStart checks what staff read of a booking's event (the service,
// no full number) and returns its start.
func checkedStart(t *testing.T, ev shopcal.Event, customer string) string {
	t.Helper()
	require.Contains(t, ev.Summary, "tire-change", "the service")
	require.NotContains(t, ev.Summary, customer[3:], "no full number: %s", ev.Summary)
	return ev.Start.UTC().Format(time.RFC3339)
}

// TestBookingFollowsInTheShopsCalendar: a booking made by WhatsApp appears
// once in the shop's own calendar of its resource, with the customer's
// number masked; moved, the one event is at the new slot; cancelled, it
// is gone. Each change is carried over by the booking's lifecycle.
func TestBookingFollowsInTheShopsCalendar(t *testing.T) {
	t.Parallel()
	for name, connect := range providers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bookMoveCancelInShopCalendar(t, connect)
		})
	}
}

// eachProvider runs f, in parallel, for a new stack whose demo shop has
// its resources' calendars at each provider (no worker started yet).
func eachProvider(t *testing.T, f func(t *testing.T, s *convStack, cals shopCalendars)) {
	t.Helper()
	for name, connect := range providers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newConvStack(t)
			f(t, &s, connect(t, &s))
		})
	}
}

// providers connect the demo shop's resources to their own calendars at
// each provider.
var providers = map[string]func(t *testing.T, s *convStack) shopCalendars{
	"caldav":    func(t *testing.T, s *convStack) shopCalendars { return withShopCalendars(t, s, false) },
	"google":    withGoogleCalendars,
	"microsoft": withMicrosoftCalendars,
}

// TestRecordHistoriesShopCalendar records that lifecycle (versioned:
// publish-booked-first, shop-calendar): booked, moved, cancelled, each
// carried over. Runs with `make histories`.
func TestRecordHistoriesShopCalendar(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s, reference := bookMoveCancelInShopCalendar(t, providers["caldav"])
	writeHistory(t, fetchHistory(t, context.Background(), s.tc, lifecycle.WorkflowID(reference), ""), "lifecycle-shop-calendar.booking.json")
}

// bookMoveCancelInShopCalendar books, moves and cancels by WhatsApp with
// the shop's calendars at a provider, checking the event after each step;
// it returns the stack and the booking's reference.
func bookMoveCancelInShopCalendar(t *testing.T, connect func(*testing.T, *convStack) shopCalendars) (convStack, string) {
	t.Helper()
	s := newConvStack(t)
	cals := connect(t, &s)
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
	testsupport.Eventually(t, 30*time.Second, "the booking in the shop's calendar", func() bool { return len(cals.events(t, id, customer)) == 1 })
	require.Equal(t, map[string]string{resource: start.UTC().Format(time.RFC3339)}, cals.events(t, id, customer), "once, in its resource's calendar")

	thursday := testsupport.Slot(t, time.Thursday, 10)
	s.say(t, in, "SMmove", fmt.Sprintf("Bitte verschieben auf den %d.%d. um 10 Uhr", thursday.Day(), int(thursday.Month())))
	testsupport.Eventually(t, 60*time.Second, "the moved event", func() bool {
		ev := cals.events(t, id, customer)
		return len(ev) == 1 && ev[firstKey(ev)] == thursday.UTC().Format(time.RFC3339)
	})

	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the event removed", func() bool {
		return messagesTo(fake, customer, "storniert") == 1 && len(cals.events(t, id, customer)) == 0
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
	withShopCalendars(t, &s, true)
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
