package shopcal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/shopcal"
)

const googleCal = "werkstatt-bay1@group.calendar.google.com"

// googleCalendar is one bay's Google calendar at the fake, reached as the
// real one is (OAuth refresh token, Calendar API v3), optionally behind a
// chaos proxy that loses answers.
type googleCalendar struct {
	fake     *shopcal.FakeGoogle
	provider *shopcal.Google
	token    string
	base     string // where the provider reaches the fake
}

func newGoogle(t *testing.T, rules ...chaos.Rule) googleCalendar {
	t.Helper()
	fake := shopcal.NewFakeGoogle("bookonce.apps.googleusercontent.com", "app-secret")
	base := serveFake(t, fake.Handler(), rules...)
	tok := fake.AddCalendar(googleCal)
	app := shopcal.GoogleApp{ClientID: fake.ClientID, ClientSecret: fake.ClientSecret, BaseURL: base}
	g, err := shopcal.NewGoogle(context.Background(), app, googleCal, tok, &http.Client{Timeout: 10 * time.Second})
	require.NoError(t, err)
	return googleCalendar{fake: fake, provider: g, token: tok, base: base}
}

// live is the event id as staff's calendar shows it: there and not
// deleted.
func (g googleCalendar) live(id string) (gcal.Event, bool) {
	ev, ok := g.fake.Event(googleCal, id)
	return ev, ok && ev.Status != "cancelled"
}

// TestGooglePutCreatesTheEventOnce: a booking written twice is one event
// under the ID bookonce chose; the second insert met Google's 409.
func TestGooglePutCreatesTheEventOnce(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGoogle(t), context.Background(), booking(t)
	for range 2 {
		require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	}
	got, ok := g.live(ev.ID)
	require.True(t, ok)
	require.Equal(t, ev.Summary, got.Summary)
	require.Equal(t, 2, g.fake.Calls("POST insert"), "the second insert was refused as a duplicate")
	require.Zero(t, g.fake.Calls("PUT update"), "and nothing needed changing")
}

// TestGooglePutAfterALostAnswerFindsTheFirstEvent: Google stores the event
// and the answer is lost (dropped, or a proxy's 502; a worker killed after
// Google's commit is the same): the retry's insert under the same ID is a
// 409, the proof it landed, and the one event stays.
func TestGooglePutAfterALostAnswerFindsTheFirstEvent(t *testing.T) {
	t.Parallel()
	for _, fault := range []chaos.Fault{chaos.DropAfterCommit, chaos.ErrorAfterCommit} {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			g := newGoogle(t, chaos.Rule{Method: http.MethodPost, PathPrefix: "/calendar/", Fault: fault, Probability: 1, Limit: 1})
			ctx, ev := context.Background(), booking(t)
			err := shopcal.Put(ctx, g.provider, ev)
			require.Error(t, err, "the answer was lost")
			require.NotEqual(t, outcome.Final, outcome.Of(err), "a lost answer is retried: %v", err)
			_, ok := g.live(ev.ID)
			require.True(t, ok, "Google stored it all the same")

			require.NoError(t, shopcal.Put(ctx, g.provider, ev), "the retry")
			require.Equal(t, 2, g.fake.Calls("POST insert"))
		})
	}
}

// TestGooglePutMovesTheOneEvent: a move is the same event at the new
// time; a staff edit between bookonce's read and write (If-Match refused,
// 412) is read again and the move lands on it.
func TestGooglePutMovesTheOneEvent(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGoogle(t), context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	moved := ev
	moved.Start, moved.End = ev.Start.Add(26*time.Hour), ev.End.Add(26*time.Hour)
	racing := &raceOnce{Provider: g.provider, before: func() {
		cur, _ := g.fake.Event(googleCal, ev.ID)
		cur.Summary = "Ölwechsel (Kunde bringt eigenes Öl)"
		g.fake.Put(googleCal, cur)
	}}
	require.NoError(t, shopcal.Put(ctx, racing, moved))
	require.Equal(t, 2, racing.updates, "the first update met the staff edit and was made again")
	got, ok := g.live(ev.ID)
	require.True(t, ok)
	require.Equal(t, moved.Start.UTC().Format(time.RFC3339), got.Start.DateTime)
}

// TestGoogleRemoveKeepsNothingAndABookingAgainRevives: a cancel deletes
// the event (Google keeps it as cancelled); a repeated cancel meets 410
// and succeeds; the same booking written again (a replayed create after
// the cancel) revives the one event, since Google refuses its ID to a new
// insert for good.
func TestGoogleRemoveKeepsNothingAndABookingAgainRevives(t *testing.T) {
	t.Parallel()
	g := newGoogle(t, chaos.Rule{Method: http.MethodDelete, Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1})
	ctx, ev := context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	require.Error(t, shopcal.Remove(ctx, g.provider, ev.ID), "the answer was lost")
	_, ok := g.live(ev.ID)
	require.False(t, ok)
	for range 2 {
		require.NoError(t, shopcal.Remove(ctx, g.provider, ev.ID))
	}
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	_, ok = g.live(ev.ID)
	require.True(t, ok, "revived under its ID")
}

// TestGoogleBusyIsWhatStaffEntered: Google lists a weekly event's
// instances (less the dropped week), a single appointment and a day off;
// bookonce's own event, one marked free and one deleted do not block.
func TestGoogleBusyIsWhatStaffEntered(t *testing.T) {
	t.Parallel()
	g, ctx := newGoogle(t), context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := func(s string) *gcal.EventDateTime { return &gcal.EventDateTime{DateTime: s} }
	g.fake.Put(googleCal, gcal.Event{Id: "staffoil01", Start: at("2030-03-12T08:00:00Z"), End: at("2030-03-12T09:00:00Z")})
	g.fake.Put(googleCal, gcal.Event{Id: "staffweekly", Start: at("2030-03-04T06:00:00Z"), End: at("2030-03-04T07:00:00Z"),
		Recurrence: []string{"RRULE:FREQ=WEEKLY;COUNT=3", "EXDATE:20300311T060000Z"}})
	g.fake.Put(googleCal, gcal.Event{Id: "staffdayoff", Start: &gcal.EventDateTime{Date: "2030-03-14"}, End: &gcal.EventDateTime{Date: "2030-03-15"}})
	g.fake.Put(googleCal, gcal.Event{Id: "stafffree01", Transparency: "transparent", Start: at("2030-03-12T10:00:00Z"), End: at("2030-03-12T11:00:00Z")})
	g.fake.Put(googleCal, gcal.Event{Id: "staffgone01", Status: "cancelled", Start: at("2030-03-12T12:00:00Z"), End: at("2030-03-12T13:00:00Z")})
	require.NoError(t, shopcal.Put(ctx, g.provider, booking(t)))

	busy, err := g.provider.Busy(ctx, time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 3, 31, 0, 0, 0, 0, time.UTC), berlin)
	require.NoError(t, err)
	require.Equal(t, []string{
		"staffweekly_20300304T060000Z 2030-03-04T06:00:00Z 1h0m0s",
		"staffoil01 2030-03-12T08:00:00Z 1h0m0s",
		"staffdayoff 2030-03-13T23:00:00Z 24h0m0s", // the whole day in Berlin
		"staffweekly_20300318T060000Z 2030-03-18T06:00:00Z 1h0m0s",
	}, spans(busy))
}

// TestGoogleRefusalsAreFinalAndLimitsAreRetried: a withdrawn consent
// (invalid_grant) and a calendar that is gone are final, for a person to
// reconnect; Google's usage limits (429, 403 rateLimitExceeded) are
// retried, and once they pass the write lands.
func TestGoogleRefusalsAreFinalAndLimitsAreRetried(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGoogle(t), context.Background(), booking(t)
	for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
		g.fake.RateLimit(status)
		err := shopcal.Put(ctx, g.provider, ev)
		require.Equal(t, outcome.Retryable, outcome.Of(err), "%d: %v", status, err)
	}
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))

	other := newGoogle(t)
	missing, err := shopcal.NewGoogle(ctx, shopcal.GoogleApp{ClientID: other.fake.ClientID, ClientSecret: other.fake.ClientSecret,
		BaseURL: other.base}, "no-such-calendar", other.token, &http.Client{Timeout: 10 * time.Second})
	require.NoError(t, err)
	err = shopcal.Put(ctx, missing, ev)
	require.Equal(t, outcome.Final, outcome.Of(err), "a calendar that is gone: %v", err)

	g.fake.Revoke(g.token)
	err = shopcal.Put(ctx, g.provider, ev)
	require.Equal(t, outcome.Final, outcome.Of(err), "consent withdrawn: %v", err)
	_, err = g.provider.Busy(ctx, ev.Start, ev.End, time.UTC)
	require.Equal(t, outcome.Final, outcome.Of(err), "%v", err)
}

// serveFake serves a provider's fake on loopback and returns the address
// the provider is to call: the fake's own, or with rules a chaos proxy's
// in front of it that loses answers.
func serveFake(t *testing.T, h http.Handler, rules ...chaos.Rule) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if len(rules) == 0 {
		return srv.URL
	}
	p, err := chaos.New(srv.URL, rules)
	require.NoError(t, err)
	proxy := httptest.NewServer(p)
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// spans shows busy intervals as "UID start(UTC) duration", for comparing.
func spans(busy []shopcal.Interval) []string {
	var out []string
	for _, b := range busy {
		out = append(out, b.UID+" "+b.Start.UTC().Format(time.RFC3339)+" "+b.End.Sub(b.Start).String())
	}
	return out
}
