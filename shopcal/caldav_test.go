package shopcal_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/shopcal"
)

// calendar is one bay's calendar on a real Radicale, optionally behind a
// chaos proxy that loses answers.
type calendar struct {
	url      string // Radicale's own address of the collection
	provider *shopcal.CalDAV
}

func newCalendar(t *testing.T, rules ...chaos.Rule) calendar {
	t.Helper()
	base := testsupport.Radicale(t)
	u := testsupport.MakeCalendar(t, base, "werkstatt", "bay-1")
	through := u
	if len(rules) > 0 {
		p, err := chaos.New(base, rules)
		require.NoError(t, err)
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		through = srv.URL + strings.TrimPrefix(u, base)
	}
	return calendar{url: u, provider: &shopcal.CalDAV{Calendar: through, Username: "werkstatt"}}
}

var href = regexp.MustCompile(`<(?:[a-zA-Z]+:)?href>([^<]+\.ics)</`)

// objects lists the calendar objects in the collection, as staff's
// calendar app sees them (PROPFIND, depth 1).
func (c calendar) objects(t *testing.T) []string {
	t.Helper()
	req, err := http.NewRequest("PROPFIND", c.url, strings.NewReader(`<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/></prop></propfind>`))
	require.NoError(t, err)
	req.Header.Set("Depth", "1")
	req.SetBasicAuth("werkstatt", "")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusMultiStatus, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out []string
	for _, m := range href.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1][strings.LastIndex(m[1], "/")+1:])
	}
	return out
}

// staffEdit changes the event in the calendar as a person in the shop
// would: an unconditional PUT of what their app shows, another title.
func (c calendar) staffEdit(t *testing.T, ev shopcal.Event, title string) {
	t.Helper()
	ev.Summary = title
	staff := &shopcal.CalDAV{Calendar: c.url, Username: "werkstatt"}
	cur, found, err := staff.Get(context.Background(), ev.ID)
	require.NoError(t, err)
	require.True(t, found)
	require.NoError(t, staff.Update(context.Background(), ev, cur.Version))
}

func booking(t *testing.T) shopcal.Event {
	start := time.Date(2030, 3, 12, 9, 0, 0, 0, time.UTC)
	return shopcal.Event{ID: shopcal.EventID("demo", "bk_"+t.Name()), Summary: "Ölwechsel – +49 151 ****5678",
		Description: "Gebucht über bookonce: https://ops.example/ops/bookings/bk_1", Start: start, End: start.Add(45 * time.Minute)}
}

// TestPutCreatesTheEventOnce: a booking written twice (a retry, a replay)
// is one event, with what bookonce wrote.
func TestPutCreatesTheEventOnce(t *testing.T) {
	t.Parallel()
	c, ctx, ev := newCalendar(t), context.Background(), booking(t)
	for range 2 {
		require.NoError(t, shopcal.Put(ctx, c.provider, ev))
	}
	require.Equal(t, []string{ev.ID + ".ics"}, c.objects(t))
	got, found, err := c.provider.Get(ctx, ev.ID)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, ev.Summary, got.Summary)
	require.Equal(t, ev.Description, got.Description)
	require.True(t, ev.Start.Equal(got.Start) && ev.End.Equal(got.End), "%v–%v", got.Start, got.End)
}

// TestPutAfterALostAnswerFindsTheFirstEvent: the CalDAV server stores the
// event and its answer is lost (the connection drops, or a proxy answers
// 502): the outcome is unknown, and the retry, under the same ID, finds
// the first event (412) instead of writing a second one. A worker killed
// after the server's commit retries the same way.
func TestPutAfterALostAnswerFindsTheFirstEvent(t *testing.T) {
	t.Parallel()
	for _, fault := range []chaos.Fault{chaos.DropAfterCommit, chaos.ErrorAfterCommit} {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			c := newCalendar(t, chaos.Rule{Method: http.MethodPut, Fault: fault, Probability: 1, Limit: 1})
			ctx, ev := context.Background(), booking(t)
			err := shopcal.Put(ctx, c.provider, ev)
			require.Error(t, err, "the answer was lost")
			require.NotEqual(t, outcome.Final, outcome.Of(err), "a lost answer is retried: %v", err)
			require.Equal(t, []string{ev.ID + ".ics"}, c.objects(t), "the server stored it all the same")

			require.NoError(t, shopcal.Put(ctx, c.provider, ev), "the retry")
			require.Equal(t, []string{ev.ID + ".ics"}, c.objects(t), "one event")
		})
	}
}

// TestPutMovesTheOneEvent: a moved booking is the same event at the new
// time; a staff member's edit made between bookonce's read and write
// (If-Match refused: 412) is read again, not overwritten blind, and the
// move still lands.
func TestPutMovesTheOneEvent(t *testing.T) {
	t.Parallel()
	c, ctx, ev := newCalendar(t), context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, c.provider, ev))
	moved := ev
	moved.Start, moved.End = ev.Start.Add(26*time.Hour), ev.End.Add(26*time.Hour)

	racing := &raceOnce{Provider: c.provider, before: func() { c.staffEdit(t, ev, "Ölwechsel (Kunde bringt eigenes Öl)") }}
	require.NoError(t, shopcal.Put(ctx, racing, moved))
	require.Equal(t, 2, racing.updates, "the first update met the staff edit and was made again")
	require.Equal(t, []string{ev.ID + ".ics"}, c.objects(t), "still one event")
	got, _, err := c.provider.Get(ctx, ev.ID)
	require.NoError(t, err)
	require.True(t, moved.Start.Equal(got.Start), "moved to %v", got.Start)
}

// TestRemoveDeletesTheEventAndAgainIsNothing: a cancelled booking's event
// is removed; a retried or replayed cancel finds nothing and succeeds; a
// lost answer to the delete is settled by the retry.
func TestRemoveDeletesTheEventAndAgainIsNothing(t *testing.T) {
	t.Parallel()
	c := newCalendar(t, chaos.Rule{Method: http.MethodDelete, Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1})
	ctx, ev := context.Background(), booking(t)
	require.NoError(t, shopcal.Put(ctx, c.provider, ev))
	require.Error(t, shopcal.Remove(ctx, c.provider, ev.ID), "the answer was lost")
	require.Empty(t, c.objects(t))
	for range 2 {
		require.NoError(t, shopcal.Remove(ctx, c.provider, ev.ID))
	}
	require.Empty(t, c.objects(t))
}

// TestCalDAVRefusalsAreFinal: a calendar that does not exist (deleted, or
// a wrong URL in tenants.yaml) is not retried for ever.
func TestCalDAVRefusalsAreFinal(t *testing.T) {
	t.Parallel()
	base := testsupport.Radicale(t)
	p := &shopcal.CalDAV{Calendar: base + "/werkstatt/no-such-calendar/", Username: "werkstatt"}
	err := shopcal.Put(context.Background(), p, booking(t))
	require.Error(t, err)
	require.Equal(t, outcome.Final, outcome.Of(err), "%v", err)
}

// raceOnce runs before ahead of the first Update, as a person editing the
// event between bookonce's read and write.
type raceOnce struct {
	shopcal.Provider
	before  func()
	updates int
}

func (r *raceOnce) Update(ctx context.Context, ev shopcal.Event, version string) error {
	if r.updates++; r.updates == 1 {
		r.before()
	}
	return r.Provider.Update(ctx, ev, version)
}
