package shopcal_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/shopcal"
)

const (
	entraTenant = "7c1e2a4b-0000-4000-8000-00000000abcd"
	mailbox     = "werkstatt@autohaus-nord.example"
	outlookCal  = "AAMkADbay1"
)

// graphCalendar is one bay's calendar in a Microsoft 365 mailbox at the
// fake, reached as the real one is (app-only token, Graph v1.0),
// optionally behind a chaos proxy.
type graphCalendar struct {
	fake     *shopcal.FakeGraph
	provider *shopcal.Graph
	base     string
}

func newGraph(t *testing.T, rules ...chaos.Rule) graphCalendar {
	t.Helper()
	fake := shopcal.NewFakeGraph("0b4f9c1e-app", "app-secret")
	base := serveFake(t, fake.Handler(), rules...)
	fake.AddCalendar(entraTenant, mailbox, outlookCal)
	app := shopcal.MicrosoftApp{ClientID: fake.ClientID, ClientSecret: fake.ClientSecret, BaseURL: base}
	g := shopcal.NewGraph(context.Background(), app, entraTenant, mailbox, outlookCal, &http.Client{Timeout: 10 * time.Second})
	return graphCalendar{fake: fake, provider: g, base: base}
}

func (g graphCalendar) events() []shopcal.GraphEvent { return g.fake.Events(mailbox, outlookCal) }

// TestGraphPutCreatesTheEventOnce: a booking written twice is one event,
// found again by its extended property; nothing needed changing.
func TestGraphPutCreatesTheEventOnce(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGraph(t), context.Background(), booking(t)
	for range 2 {
		require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	}
	require.Len(t, g.events(), 1)
	require.Equal(t, ev.Summary, g.events()[0].Subject)
	require.Equal(t, 1, g.fake.Calls("POST create"))
	require.Zero(t, g.fake.Calls("PATCH update"))
}

// TestGraphPutAfterALostAnswerFindsTheFirstEvent: Graph stores the event
// and the answer is lost (a worker killed after Graph's commit is the
// same): the retry finds it by its property, and a create retried
// blindly would meet its transactionId: one event either way.
func TestGraphPutAfterALostAnswerFindsTheFirstEvent(t *testing.T) {
	t.Parallel()
	for _, fault := range []chaos.Fault{chaos.DropAfterCommit, chaos.ErrorAfterCommit} {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			g := newGraph(t, chaos.Rule{Method: http.MethodPost, PathPrefix: "/v1.0/", Fault: fault, Probability: 1, Limit: 1})
			ctx, ev := context.Background(), booking(t)
			err := shopcal.Put(ctx, g.provider, ev)
			require.Error(t, err, "the answer was lost")
			require.NotEqual(t, outcome.Final, outcome.Of(err), "a lost answer is retried: %v", err)
			require.Len(t, g.events(), 1, "Graph stored it all the same")
			require.NoError(t, shopcal.Put(ctx, g.provider, ev), "the retry")
			require.Len(t, g.events(), 1, "one event")

			created, err := g.provider.Create(ctx, ev)
			require.NoError(t, err)
			require.False(t, created)
			require.Len(t, g.events(), 1)
		})
	}
}

// TestGraphPutMovesTheOneEvent: a move patches the one event; a staff
// edit in Outlook between read and write (412 on If-Match) is read again.
func TestGraphPutMovesTheOneEvent(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGraph(t), context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	moved := ev
	moved.Start, moved.End = ev.Start.Add(26*time.Hour), ev.End.Add(26*time.Hour)
	racing := &raceOnce{Provider: g.provider, before: func() {
		cur := g.events()[0]
		cur.Subject = "Ölwechsel (Kunde bringt eigenes Öl)"
		g.fake.Put(mailbox, outlookCal, cur)
	}}
	require.NoError(t, shopcal.Put(ctx, racing, moved))
	require.Equal(t, 2, racing.updates, "the first update met the staff edit and was made again")
	require.Len(t, g.events(), 1)
	require.Equal(t, moved.Start.UTC().Format("2006-01-02T15:04:05.0000000"), g.events()[0].Start.DateTime)
}

// TestGraphRemoveDeletesTheEventAndAgainIsNothing: a cancel deletes the
// event; a lost answer and repeated cancels end the same.
func TestGraphRemoveDeletesTheEventAndAgainIsNothing(t *testing.T) {
	t.Parallel()
	g := newGraph(t, chaos.Rule{Method: http.MethodDelete, Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1})
	ctx, ev := context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))
	require.Error(t, shopcal.Remove(ctx, g.provider, ev.ID), "the answer was lost")
	require.Empty(t, g.events())
	for range 2 {
		require.NoError(t, shopcal.Remove(ctx, g.provider, ev.ID))
	}
	require.Empty(t, g.events())
}

// TestGraphBusyIsWhatStaffEntered: calendarView's occurrences of a weekly
// series, a single appointment over two pages' worth of events, a day off
// in Berlin; not bookonce's own event, one shown as free or cancelled.
func TestGraphBusyIsWhatStaffEntered(t *testing.T) {
	t.Parallel()
	g, ctx := newGraph(t), context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := func(s string) shopcal.GraphTime { return shopcal.GraphTime{DateTime: s, TimeZone: "UTC"} }
	weekly := shopcal.GraphEvent{ID: "staffweekly", Start: at("2030-03-04T06:00:00.0000000"), End: at("2030-03-04T07:00:00.0000000"), Recurrence: &shopcal.GraphRecurrence{}}
	weekly.Recurrence.Pattern.Type, weekly.Recurrence.Pattern.Interval = "weekly", 1
	weekly.Recurrence.Range.Type, weekly.Recurrence.Range.NumberOfOccurrences = "numbered", 2
	g.fake.Put(mailbox, outlookCal, weekly)
	g.fake.Put(mailbox, outlookCal, shopcal.GraphEvent{ID: "staffoil", Start: at("2030-03-12T08:00:00.0000000"), End: at("2030-03-12T09:00:00.0000000")})
	g.fake.Put(mailbox, outlookCal, shopcal.GraphEvent{ID: "staffdayoff", IsAllDay: true,
		Start: shopcal.GraphTime{DateTime: "2030-03-14T00:00:00.0000000", TimeZone: "W. Europe Standard Time"}, End: shopcal.GraphTime{DateTime: "2030-03-15T00:00:00.0000000", TimeZone: "W. Europe Standard Time"}})
	g.fake.Put(mailbox, outlookCal, shopcal.GraphEvent{ID: "stafffree", ShowAs: "free", Start: at("2030-03-12T10:00:00.0000000"), End: at("2030-03-12T11:00:00.0000000")})
	g.fake.Put(mailbox, outlookCal, shopcal.GraphEvent{ID: "staffgone", IsCancelled: true, Start: at("2030-03-12T12:00:00.0000000"), End: at("2030-03-12T13:00:00.0000000")})
	require.NoError(t, shopcal.Put(ctx, g.provider, booking(t)))

	busy, err := g.provider.Busy(ctx, time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 3, 31, 0, 0, 0, 0, time.UTC), berlin)
	require.NoError(t, err)
	require.Equal(t, []string{
		"staffweekly_occ0 2030-03-04T06:00:00Z 1h0m0s",
		"staffweekly_occ1 2030-03-11T06:00:00Z 1h0m0s",
		"staffoil 2030-03-12T08:00:00Z 1h0m0s",
		"staffdayoff 2030-03-13T23:00:00Z 24h0m0s", // the whole day in Berlin
	}, spans(busy))
}

// TestGraphRefusalsAreFinalAndThrottlingIsRetried: Graph's 429 is retried
// and the write lands once it passes; a calendar that is gone and a
// withdrawn consent are final.
func TestGraphRefusalsAreFinalAndThrottlingIsRetried(t *testing.T) {
	t.Parallel()
	g, ctx, ev := newGraph(t), context.Background(), booking(t)
	g.fake.Throttle(1)
	err := shopcal.Put(ctx, g.provider, ev)
	require.Equal(t, outcome.Retryable, outcome.Of(err), "%v", err)
	require.NoError(t, shopcal.Put(ctx, g.provider, ev))

	missing := shopcal.NewGraph(ctx, shopcal.MicrosoftApp{ClientID: g.fake.ClientID, ClientSecret: g.fake.ClientSecret, BaseURL: g.base},
		entraTenant, mailbox, "no-such-calendar", &http.Client{Timeout: 10 * time.Second})
	err = shopcal.Put(ctx, missing, ev)
	require.Equal(t, outcome.Final, outcome.Of(err), "a calendar that is gone: %v", err)

	g.fake.Withdraw(entraTenant)
	err = shopcal.Put(ctx, g.provider, ev)
	require.Equal(t, outcome.Final, outcome.Of(err), "consent withdrawn: %v", err)
}
