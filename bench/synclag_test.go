package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
)

// syncLagLoad is one sync-lag measurement: the mirror's poll interval and
// how many staff entries are timed.
type syncLagLoad struct {
	poll    time.Duration
	samples int
	push    bool // the calendar pushes its changes (Google's watch channel)
}

type syncLagResult struct {
	poll time.Duration
	push bool
	lags []time.Duration // sorted
}

// The targets, for polling and for push.
const (
	syncLagTargetPolling = 60 * time.Second
	syncLagTargetPush    = 5 * time.Second
)

// measureSyncLag times how long after a person enters an appointment in
// the resource's own calendar (a real CalDAV server) the slot stops being
// offered by bookonce's calendar API, with the workers' mirror sweeping
// every poll. Entries are made at a random phase of the sweep, so the lags
// spread over the interval as real ones do. (The hold step re-reads the
// calendar, so a hold sees no lag at all; this is what availability and
// the conflict check see.)
func measureSyncLag(t *testing.T, l syncLagLoad) syncLagResult {
	e := newEnv(t)
	base := testsupport.Radicale(t)
	cal := testsupport.MakeCalendar(t, base, "werkstatt", "bay-1")
	connectBay1(t, e, &tenants.ShopCalendar{CalDAV: cal, Username: "werkstatt"})
	e.cfg.CalendarURL = stacktest.CalendarAPI(t, e.cfg, e.pool).URL
	acts := stack.NewActivities(e.cfg, e.pool, testsupport.Tenants(t, e.pool), nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// The sweep's failures are logged; the bench shows them.
	acts.ShopMirror.Log = slog.New(slog.NewTextHandler(testsupport.LogWriter(t), nil))
	go acts.ShopMirror.Run(ctx, l.poll)

	return timeEntries(t, acts, l, func(uid string, slot time.Time) {
		testsupport.StaffEvent(t, cal, uid, "BEGIN:VEVENT\nUID:"+uid+"\nDTSTAMP:20260101T000000Z\nDTSTART:"+slot.UTC().Format("20060102T150405Z")+
			"\nDTEND:"+slot.Add(time.Hour).UTC().Format("20060102T150405Z")+"\nSUMMARY:Werkstatt intern\nEND:VEVENT")
	})
}

// connectBay1 applies the demo shop with bay-1's own calendar cal.
func connectBay1(t *testing.T, e env, cal *tenants.ShopCalendar) {
	f, err := tenants.Parse(deploy.DemoFileName, deploy.DemoTenants)
	require.NoError(t, err)
	for i, r := range f.Tenants[0].Resources {
		if r.ID == "bay-1" {
			f.Tenants[0].Resources[i].Calendar = cal
		}
	}
	_, err = tenants.Apply(context.Background(), e.pool, f, tenants.ApplyOptions{})
	require.NoError(t, err)
}

// timeEntries has staff enter l.samples appointments in bay-1's own
// calendar (enter), each at a random phase of the sweep, and times each
// until bookonce's calendar API no longer offers its slot.
func timeEntries(t *testing.T, acts *activities.Activities, l syncLagLoad, enter func(uid string, slot time.Time)) syncLagResult {
	res := syncLagResult{poll: l.poll, push: l.push}
	for i := range l.samples {
		// A slot of its own, within the mirror's horizon, in the bay's hours.
		slot := testsupport.Slot(t, time.Tuesday, 9+i%8).AddDate(0, 0, 7*(i/8))
		pace := l.poll
		if l.push {
			pace = time.Second // no phase to spread over: entries a moment apart
		}
		time.Sleep(rand.N(pace)) // a random phase of the sweep: pacing, not synchronisation
		entered := time.Now()
		enter(fmt.Sprintf("synclag%d", i), slot)
		testsupport.Eventually(t, min(l.poll, 5*time.Minute)+time.Minute, "the slot no longer offered", func() bool {
			// A client per look, as the worker makes one per call: its
			// service token lives minutes, fewer than a full run takes.
			c, err := acts.Calendar("demo")
			require.NoError(t, err)
			slots, err := c.Availability(context.Background(), "tire-change", "bay-1", slot, slot.Add(30*time.Minute))
			return err == nil && len(slots) == 0
		})
		res.lags = append(res.lags, time.Since(entered))
	}
	slices.Sort(res.lags)
	return res
}

func (r syncLagResult) quantile(q float64) time.Duration {
	if len(r.lags) == 0 {
		return 0
	}
	return r.lags[min(len(r.lags)-1, int(q*float64(len(r.lags))))]
}

func (r *report) syncLagTables(b *strings.Builder) []target {
	fmt.Fprintf(b, "A person enters an appointment in a bay's own calendar at a random phase of the workers' sweep; measured is the time "+
		"until bookonce's calendar API no longer offers the slot. Polling: Radicale, a real CalDAV server, read every %s "+
		"(`SHOP_CALENDAR_POLL`'s default is 30s). Push: a Google calendar (the fake of Google, which posts a watch channel's "+
		"notification at once) calls the gateway, which tells the listening worker; its poll is an hour apart. "+
		"A hold sees no lag at all: the hold step reads the calendar again for its slot.\n\n", r.syncLag.poll)
	b.WriteString("| how | poll | entries | p50 s | p95 s | max s |\n|---|---:|---:|---:|---:|---:|\n")
	var ts []target
	for _, s := range []syncLagResult{r.syncLag, r.pushLag} {
		if s.lags == nil {
			continue
		}
		how, goal := "polling", syncLagTargetPolling
		if s.push {
			how, goal = "push", syncLagTargetPush
		}
		p95 := s.quantile(0.95)
		fmt.Fprintf(b, "| %s | %s | %d | %.1f | %.1f | %.1f |\n", how, s.poll, len(s.lags), s.quantile(0.5).Seconds(), p95.Seconds(), s.quantile(1).Seconds())
		ts = append(ts, target{"8. shop calendar sync lag, " + how, fmt.Sprintf("p95 ≤ %s", goal),
			fmt.Sprintf("%.1f s (%s)", p95.Seconds(), verdict(p95 <= goal))})
	}
	return ts
}
