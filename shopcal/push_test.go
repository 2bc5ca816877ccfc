package shopcal_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gcal "google.golang.org/api/calendar/v3"

	bcal "github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/shopcal"
)

// watched is one bay's calendar at a fake provider that pushes its
// changes to a gateway (the Receiver, on loopback) whose database the
// mirror listens on; what the mirror stores is recorded.
type watched struct {
	mirror  *shopcal.Mirror
	gateway string
	stored  *stored
	pushCalendar
}

// stored records the UIDs of the blocks the mirror stored last.
type stored struct {
	mu   sync.Mutex
	uids []string
	n    int
}

func (s *stored) has(uid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.uids, uid)
}

func (s *stored) refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// pushCalendar is one bay's calendar at a fake that pushes: how staff
// enter and delete an event there, and what the fake counts.
type pushCalendar struct {
	provider   shopcal.Provider
	staffEvent func(uid string, start time.Time)
	remove     func(uid string)
	open       func() int
	calls      func(string) int
}

var pushProviders = map[string]func(t *testing.T) pushCalendar{
	"google": func(t *testing.T) pushCalendar {
		g := newGoogle(t)
		return pushCalendar{provider: g.provider, staffEvent: func(uid string, start time.Time) {
			g.fake.Put(googleCal, gcal.Event{Id: uid, Start: &gcal.EventDateTime{DateTime: start.Format(time.RFC3339)},
				End: &gcal.EventDateTime{DateTime: start.Add(time.Hour).Format(time.RFC3339)}})
		}, remove: func(uid string) { g.fake.Remove(googleCal, uid) }, open: g.fake.Channels, calls: g.fake.Calls}
	},
	"microsoft": func(t *testing.T) pushCalendar {
		g := newGraph(t)
		return pushCalendar{provider: g.provider, staffEvent: func(uid string, start time.Time) {
			g.fake.Put(mailbox, outlookCal, shopcal.GraphEvent{ID: uid, Subject: "Ölwechsel", ShowAs: "busy",
				Start: shopcal.GraphTime{DateTime: start.UTC().Format("2006-01-02T15:04:05"), TimeZone: "UTC"},
				End:   shopcal.GraphTime{DateTime: start.Add(time.Hour).UTC().Format("2006-01-02T15:04:05"), TimeZone: "UTC"}})
		}, remove: func(uid string) { g.fake.Remove(mailbox, outlookCal, uid) }, open: g.fake.Subscriptions, calls: g.fake.Calls}
	},
}

func newWatched(t *testing.T, provider string) watched {
	t.Helper()
	pool := testsupport.Database(t) // has the demo shop and its bay-1
	channels := &shopcal.Channels{Pool: pool}
	gw := httptest.NewServer(routes((&shopcal.Receiver{Channels: channels}).Routes()))
	t.Cleanup(gw.Close)
	cal := pushProviders[provider](t)
	rec := &stored{}
	m := &shopcal.Mirror{
		Calendars: func(tenant, resource string) (shopcal.Provider, bool, error) {
			return cal.provider, resource == "bay-1", nil
		},
		Tenants:   func() []string { return []string{"demo"} },
		Resources: func(string) []string { return []string{"bay-1"} },
		Blocks: func(_ context.Context, _, _ string, req bcal.BlocksRequest) (bcal.BlocksResult, error) {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.n++
			rec.uids = nil
			for _, b := range req.Blocks {
				rec.uids = append(rec.uids, b.UID)
			}
			return bcal.BlocksResult{}, nil
		},
		Conflict: func(context.Context, string, bcal.Conflict) error { return nil },
		Push:     &shopcal.Push{Channels: channels, URL: gw.URL},
	}
	return watched{mirror: m, gateway: gw.URL, stored: rec, pushCalendar: cal}
}

func routes(rs map[string]http.Handler) http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range rs {
		mux.Handle(pattern, h)
	}
	return mux
}

// TestPushedChangeIsMirroredAtOnce: with the poll an hour apart, a
// staff entry is mirrored anyway, and so is its deletion: the provider
// pushes each change to the gateway, which tells the listening mirror;
// one channel per calendar.
func TestPushedChangeIsMirroredAtOnce(t *testing.T) {
	t.Parallel()
	for provider := range pushProviders {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, provider)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go w.mirror.Run(ctx, time.Hour)
			testsupport.Eventually(t, 30*time.Second, "the first sweep", func() bool { return w.stored.refreshes() == 1 })
			require.Equal(t, 1, w.open(), "one channel on the calendar")

			w.staffEvent("frontdesk1", time.Now().UTC().Add(7*24*time.Hour).Truncate(time.Hour)) // within the horizon
			testsupport.Eventually(t, 30*time.Second, "the entry mirrored, an hour before the next poll", func() bool {
				return w.stored.has("frontdesk1")
			})
			require.Equal(t, 1, w.open(), "still one channel")

			w.remove("frontdesk1")
			testsupport.Eventually(t, 30*time.Second, "the deleted entry no longer mirrored", func() bool {
				return !w.stored.has("frontdesk1")
			})
		})
	}
}

// TestChannelNearItsEndIsReplacedOrRenewed: a sweep when less than a
// third of a channel's life is left renews it (Graph: PATCH) or opens a
// new one and stops the old (Google cannot extend one): one channel
// stays, and changes go on arriving.
func TestChannelNearItsEndIsReplacedOrRenewed(t *testing.T) {
	t.Parallel()
	for provider, renewCall := range map[string]string{"google": "POST stop", "microsoft": "PATCH renew"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			w := newWatched(t, provider)
			w.mirror.Push.TTL = 3 * time.Hour
			ctx := context.Background()
			require.NoError(t, w.mirror.Sweep(ctx))
			first, ok, err := w.mirror.Push.Channels.Current(ctx, "demo", "bay-1")
			require.NoError(t, err)
			require.True(t, ok)

			require.NoError(t, w.mirror.Sweep(ctx))
			require.Zero(t, w.calls(renewCall), "a channel with most of its life left is kept")

			w.mirror.Now = func() time.Time { return time.Now().Add(2*time.Hour + 30*time.Minute) }
			require.NoError(t, w.mirror.Sweep(ctx))
			require.Equal(t, 1, w.calls(renewCall))
			require.Equal(t, 1, w.open())
			now, ok, err := w.mirror.Push.Channels.Current(ctx, "demo", "bay-1")
			require.NoError(t, err)
			require.True(t, ok)
			require.True(t, now.Expires.After(first.Expires), "the channel lives longer: %v, was %v", now.Expires, first.Expires)
		})
	}
}

// TestPushThatIsNotTheChannelsIsRefused: a notification naming no
// channel, or a channel with another secret, changes nothing; Graph's
// validation handshake is answered with its token as plain text.
func TestPushThatIsNotTheChannelsIsRefused(t *testing.T) {
	t.Parallel()
	w := newWatched(t, "google")
	require.NoError(t, w.mirror.Sweep(context.Background()))
	ch, _, err := w.mirror.Push.Channels.Current(context.Background(), "demo", "bay-1")
	require.NoError(t, err)
	for name, c := range map[string]struct{ id, token string }{"unknown channel": {"bookonce-0000", "x"}, "wrong token": {ch.ID, "guessed"}} {
		req, err := http.NewRequest(http.MethodPost, w.gateway+shopcal.RouteGooglePush, nil)
		require.NoError(t, err)
		req.Header.Set("X-Goog-Channel-ID", c.id)
		req.Header.Set("X-Goog-Channel-Token", c.token)
		req.Header.Set("X-Goog-Resource-State", "exists")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, name)
	}

	resp, err := http.Post(w.gateway+shopcal.RouteMicrosoftPush, "application/json",
		strings.NewReader(`{"value":[{"subscriptionId":"x","clientState":"`+ch.ID+`.guessed","changeType":"created"}]}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "Graph is answered; the notification is dropped")

	token := "Validation: Testing client application reachability <&>"
	resp, err = http.Post(w.gateway+shopcal.RouteMicrosoftPush+"?validationToken="+url.QueryEscape(token), "text/plain", nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, token, string(body))
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
}
