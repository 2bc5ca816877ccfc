package drill

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bookonce/bookonce/internal/postgres"
)

// Crashes are the crashes beyond workers: the downstream services the
// drill runs as child processes, and its own PostgreSQL cluster.
type Crashes struct {
	// APIKillEvery is how often the calendar or the payment API process
	// (drawn at random; in the scaled topology any replica of them or of
	// the gateway) is SIGKILLed and started again at once on its port,
	// until every booking has settled; 0: never.
	APIKillEvery time.Duration
	// RestartPostgres crashes the drill's PostgreSQL cluster once
	// (pg_ctl -m immediate stop: no checkpoint, WAL replay at the next
	// start) and starts it again on its port.
	RestartPostgres bool
	// RestartTemporal SIGKILLs the Temporal server process once and starts
	// it again on its SQLite file and port.
	RestartTemporal bool
	// Outage is how long OutageOf (the payment API when empty) is
	// unreachable, once; 0: no outage. It should exceed StepRetryBudget, so
	// that steps and compensations due meanwhile exhaust their retries.
	Outage   time.Duration
	OutageOf string
	// PostgresOutage is how long the drill's PostgreSQL cluster is kept
	// down, once (pg_ctl -m immediate stop, then a start on its port); 0:
	// no PostgreSQL outage. It should exceed two minutes, so that the
	// confirmations (outbox messages) and reminders of the bookings
	// confirmed before it fall due while no process reaches the database.
	PostgresOutage time.Duration
	// CalendarOutage is how long the calendar API is kept down, once,
	// before the payment API's outage; 0: none. The workers' payment
	// sagas then wait at most DecisionTimeout(CalendarOutage) for their
	// booking's decision before they ask whether it still runs, so the
	// bookings paid just before it outlast their payment's decision bound
	// while their confirmation retries: each must still be confirmed and
	// captured, or undone with a message, never undone in silence.
	CalendarOutage time.Duration
	// ProviderOutage is how long the shops' own calendars are unreachable
	// (every provider at once, connections cut), once, first of the
	// one-shots; 0: none. Writes to them then meet no answer and must
	// land once when they are back; holds go on without their re-read.
	ProviderOutage time.Duration
	// Deploy deploys a new worker build mid-run: the workers run as a
	// versioned build, deployAfter into the run the same number of a new
	// build start and promote it, and the old build's workers stop once
	// nothing is pinned to it (deploy.go).
	Deploy bool
	// After is when the first one-shot crash (the PostgreSQL restart, the
	// Temporal restart, the calendar outage, the API outage, then the
	// PostgreSQL outage) comes after the first webhook; Gap separates them.
	After, Gap time.Duration
}

// StepRetryBudget is how long a saga step retries with the default
// workflows.Tuning before it gives up: 10 attempts, backoff from 200 ms
// doubling and capped at 10 s (0.2+0.4+...+6.4+10+10+10 = 42.6 s, plus the
// attempts themselves, which fail at once while a service is down).
const StepRetryBudget = 43 * time.Second

// DefaultPostgresOutage is how long `make chaos` keeps PostgreSQL down:
// longer than two minutes.
const DefaultPostgresOutage = 130 * time.Second

// DefaultCalendarOutage is how long `make chaos` keeps the calendar down:
// three payment decision bounds (DecisionTimeout). A 60 s outage behind
// the payment outage made the 1000-booking run 723 s; the bound, not the
// length, is what the outage is for.
const DefaultCalendarOutage = 30 * time.Second

// DecisionTimeout is the workers' PAYMENT_DECISION_TIMEOUT in a drill
// whose calendar is down for outage: a third of it, so that a payment
// saga waits past its bound at least twice while the confirmation of its
// booking retries. Zero without a calendar outage: the derived bound.
func DecisionTimeout(outage time.Duration) time.Duration {
	return outage / 3
}

// DefaultProviderOutage is how long the shops' calendars are down in a
// drill: longer than a shop-calendar write's first retries, shorter than
// its bound (workflows.CompensationCtx), so each write must land once
// after it, not open a case.
const DefaultProviderOutage = 30 * time.Second

// DefaultCrashes are the crashes of `make chaos`: an API process killed
// every 15 s, PostgreSQL and Temporal restarted once, the payment API
// down for twice the step retry budget after the calendar was down for
// DefaultCalendarOutage, and then PostgreSQL down for
// DefaultPostgresOutage.
func DefaultCrashes() *Crashes {
	return &Crashes{APIKillEvery: 15 * time.Second, RestartPostgres: true, RestartTemporal: true, ProviderOutage: DefaultProviderOutage,
		Outage: 2 * StepRetryBudget, OutageOf: upstreamPayments, CalendarOutage: DefaultCalendarOutage, PostgresOutage: DefaultPostgresOutage,
		After: 8 * time.Second, Gap: 10 * time.Second}
}

// Crash is one crash or restart the drill caused, in its report.
type Crash struct {
	// Kind is api_kill, postgres_restart, temporal_restart, outage,
	// postgres_outage or provider_outage.
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// At is when it began, in seconds since the drill started; Down how
	// long the target did not answer (until it answered again).
	At   float64 `json:"at_seconds"`
	Down float64 `json:"down_seconds"`
	// How says how it was brought down (SIGKILL, pg_ctl -m immediate).
	How string `json:"how"`
	// Error is set when the target did not come back: the drill fails.
	Error string `json:"error,omitempty"`
}

// crashLog collects the crashes of one drill.
type crashLog struct {
	start time.Time
	mu    sync.Mutex
	list  []Crash
}

// record runs down (bring the target down) and up (bring it back and wait
// until it answers), and logs the crash with its times.
func (l *crashLog) record(kind, target, how string, progress func(string, ...any), down, up func() error) {
	began := time.Now()
	c := Crash{Kind: kind, Target: target, How: how, At: round2(began.Sub(l.start).Seconds())}
	err := down()
	if err == nil {
		err = up()
	}
	c.Down = round2(time.Since(began).Seconds())
	if err != nil {
		c.Error = err.Error()
	}
	l.mu.Lock()
	l.list = append(l.list, c)
	l.mu.Unlock()
	progress("%s of %s at %.1fs (%s): down %.1fs %s", kind, target, c.At, how, c.Down, c.Error)
}

func (l *crashLog) snapshot() []Crash {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Crash(nil), l.list...)
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// conductor brings the services and the database down as Crashes says.
type conductor struct {
	crashes  Crashes
	apis     map[string][]*service
	temporal *service
	cluster  *postgres.Cluster
	log      *crashLog
	progress func(string, ...any)
	// pgDown is held while the PostgreSQL outage keeps the cluster down;
	// lastStart is when killWorker last started a worker (Unix ns).
	pgDown    sync.Mutex
	lastStart atomic.Int64
	// providers are the gates in front of the shops' calendars.
	providers []*providerGate
	// db is shut for the outage's length; sent is closed once every
	// customer's first webhook went out: the outage comes after it.
	db   *dbGate
	sent <-chan struct{}
	// promoted closes once a deploy's new build is current (nil: no
	// deploy); the Temporal restart comes after it (deployer.promoted).
	promoted <-chan struct{}
}

// oneShots runs the crashes that happen once, in order, Gap apart, and
// returns when the last target is back (the drill settles only after
// that).
func (c *conductor) oneShots(ctx context.Context) {
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	var shots []func()
	if c.crashes.ProviderOutage > 0 && len(c.providers) > 0 {
		shots = append(shots, func() { c.providerOutage(wait, c.crashes.ProviderOutage) })
	}
	if c.crashes.RestartPostgres && c.cluster != nil {
		shots = append(shots, func() {
			c.log.record("postgres_restart", "postgresql", "pg_ctl -m immediate stop", c.progress,
				func() error { return c.cluster.Crash(ctx) }, func() error { return c.cluster.Start(ctx) })
		})
	}
	if c.crashes.RestartTemporal {
		shots = append(shots, func() {
			if c.promoted != nil {
				select {
				case <-c.promoted:
				case <-ctx.Done():
					return
				}
			}
			c.log.record("temporal_restart", "temporal", "SIGKILL", c.progress,
				func() error { return c.temporal.stop(syscall.SIGKILL, 10*time.Second) },
				func() error { return c.temporal.start(ctx) })
		})
	}
	// The calendar outage comes early, while the first links are paid:
	// later, behind the payment outage, its backlog of paid bookings
	// would meet the PostgreSQL outage and stretch the run by minutes.
	if c.crashes.CalendarOutage > 0 {
		shots = append(shots, func() { c.outage(ctx, wait, upstreamCalendar, c.crashes.CalendarOutage) })
	}
	if c.crashes.Outage > 0 {
		shots = append(shots, func() { c.outage(ctx, wait, cmp.Or(c.crashes.OutageOf, upstreamPayments), c.crashes.Outage) })
	}
	if c.crashes.PostgresOutage > 0 {
		shots = append(shots, func() { c.postgresOutage(ctx, wait) })
	}
	if !wait(c.crashes.After) {
		return
	}
	for i, shot := range shots {
		if i > 0 && !wait(c.crashes.Gap) {
			return
		}
		shot()
	}
}

// processBoot is how long a process just started may need PostgreSQL
// before it rides out an outage: at start, postgres.Open (ping for 15 s,
// then the migrations) and the first load of the tenants registry are
// not retried, and their failure ends the process.
const processBoot = 5 * time.Second

// postgresOutage keeps the drill's PostgreSQL cluster down for
// PostgresOutage: an immediate stop (a crash), then a start on its port.
// Every running process must ride it out on its pool. No process is
// started meanwhile: API kills and worker kills (killWorker) are spared,
// since a process started without its database exits, which the drill
// would count as a crash it did not cause.
func (c *conductor) postgresOutage(ctx context.Context, wait func(time.Duration) bool) {
	if c.cluster == nil {
		c.progress("no postgres_outage: the drill does not own its PostgreSQL cluster")
		return
	}
	select {
	case <-c.sent: // the bookings under way confirm, pay and remind meanwhile
	case <-ctx.Done():
		return
	}
	c.pgDown.Lock()
	defer c.pgDown.Unlock()
	for _, svc := range killTargets(c.apis) { // an API restarted last answered /healthz: it is up
		svc.crashing.Lock()
		defer svc.crashing.Unlock()
	}
	if d := processBoot - time.Since(time.Unix(0, c.lastStart.Load())); d > 0 {
		wait(d) // a worker started just now may still be connecting
	}
	c.log.record("postgres_outage", "postgresql", fmt.Sprintf("pg_ctl -m immediate stop, kept down %s", c.crashes.PostgresOutage), c.progress,
		func() error { c.db.down.Store(true); return c.cluster.Crash(ctx) },
		func() error {
			defer c.db.down.Store(false)
			wait(c.crashes.PostgresOutage)
			return c.cluster.Start(context.WithoutCancel(ctx))
		})
}

// killWorker is the worker killer's tick: SIGKILL a random worker and
// start another, skipped while the PostgreSQL outage keeps the cluster
// down.
func (c *conductor) killWorker(ws *workers, rng *rand.Rand) func() {
	return func() {
		if !c.pgDown.TryLock() {
			return
		}
		defer c.pgDown.Unlock()
		_ = ws.killOne(rng)
		c.lastStart.Store(time.Now().UnixNano())
	}
}

// outage keeps the API name down for d, longer than a step retries:
// every replica of it (an outage of the service, not of a process).
func (c *conductor) outage(ctx context.Context, wait func(time.Duration) bool, name string, d time.Duration) {
	replicas := c.apis[name]
	if len(replicas) == 0 {
		c.progress("no outage: unknown service %q", name)
		return
	}
	for _, svc := range replicas {
		svc.crashing.Lock()
		defer svc.crashing.Unlock()
	}
	c.log.record("outage", name, fmt.Sprintf("SIGKILL, kept down %s", d), c.progress,
		func() error {
			for _, svc := range replicas {
				svc.metrics.save()
				if err := svc.stop(syscall.SIGKILL, 10*time.Second); err != nil {
					return err
				}
			}
			return nil
		},
		func() error {
			wait(d)
			for _, svc := range replicas {
				if err := svc.start(context.WithoutCancel(ctx)); err != nil {
					return err
				}
			}
			return nil
		})
}

// killAPIs SIGKILLs a random API process (in the scaled topology: any
// replica of the calendar, the payment API or the gateway) every
// APIKillEvery and starts it again at once, until ctx ends. One at a
// time, each back before the next kill: a replica's twin stays up. An
// API held down by an outage is spared.
func (c *conductor) killAPIs(ctx context.Context, rng *rand.Rand) {
	if c.crashes.APIKillEvery <= 0 {
		return
	}
	targets := killTargets(c.apis)
	every(ctx, c.crashes.APIKillEvery, func() {
		svc := targets[rng.IntN(len(targets))]
		if !svc.crashing.TryLock() { // in an outage: leave it down
			return
		}
		defer svc.crashing.Unlock()
		c.log.record("api_kill", svc.name, "SIGKILL", c.progress,
			func() error {
				svc.metrics.save()
				return svc.stop(syscall.SIGKILL, 10*time.Second)
			},
			func() error { return svc.start(context.WithoutCancel(ctx)) })
	})
}

// crashLine lists the crashes for the summary: kind, target, when and for
// how long, e.g. "api_kill payments @31.2s (0.4s down)".
func crashLine(list []Crash) string {
	parts := make([]string, 0, len(list))
	for _, c := range list {
		p := fmt.Sprintf("%s %s @%.1fs (%.1fs down)", c.Kind, c.Target, c.At, c.Down)
		if c.Error != "" {
			p += " FAILED"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
