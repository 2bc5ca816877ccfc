package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/mask"
)

// Run performs the drill and returns its report. An error means the drill
// could not run (no PostgreSQL, a port taken); a drill that ran and found
// duplicates or losses returns a report with Passed false. The drill's
// database is dropped afterwards unless the drill failed.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if opts.LogDir == "" {
		dir, err := os.MkdirTemp("", "bookonce-drill-")
		if err != nil {
			return nil, err
		}
		opts.LogDir = dir
	} else if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("worker log directory: %w", err)
	}
	started := time.Now()
	opts.progress("starting the stack (PostgreSQL cluster, Temporal server and API processes, fake Twilio, fault proxies, gateway)")
	e, err := startEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	keep := false // only a drill that ran and failed leaves its database
	defer func() { e.close(keep) }()

	ws := newWorkers(opts, e.workerEnv)
	defer ws.stop()
	for range opts.Workers {
		if err := ws.start(); err != nil {
			return nil, err
		}
	}
	opts.progress("%d worker processes started (logs in %s)", opts.Workers, opts.LogDir)

	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	all := scenarios(opts.Bookings, rng, e.cfg.Timezone, time.Now(), int(opts.Seed%100))
	byCustomer := map[string]Scenario{}
	for _, s := range all {
		byCustomer[s.Customer] = s
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var bg sync.WaitGroup
	defer bg.Wait()
	defer stopRun()
	bg.Add(1)
	go func() { defer bg.Done(); e.operate(runCtx, byCustomer) }()
	var crashes []string
	var crashMu sync.Mutex
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			err := ws.watch(runCtx)
			if err == nil {
				return
			}
			crashMu.Lock()
			crashes = append(crashes, err.Error())
			crashMu.Unlock()
			_ = ws.start()
		}
	}()

	killRng := rand.New(rand.NewPCG(opts.Seed, 2)) // the killer's own: rand.Rand is not safe for concurrent use
	d := newDriver(e, opts.Concurrency)
	// Kills go on until everything settled: most activities run after the
	// webhooks were accepted, while the workers work off the backlog.
	inFlight, settled := context.WithCancel(runCtx)
	defer settled()
	sending, doneSending := context.WithCancel(runCtx)
	crashLog := &crashLog{start: started}
	c := &conductor{crashes: *opts.Crashes, apis: e.apis, temporal: e.temporal, cluster: e.cluster,
		scrapers: e.scrapers, log: crashLog, progress: opts.progress}
	oneShotsDone := make(chan struct{})
	bg.Add(5)
	go func() { defer bg.Done(); every(inFlight, opts.KillEvery, func() { _ = ws.killOne(killRng) }) }()
	go func() { defer bg.Done(); c.killAPIs(inFlight, rand.New(rand.NewPCG(opts.Seed, 4))) }()
	go func() { defer bg.Done(); defer close(oneShotsDone); c.oneShots(runCtx) }()
	go func() {
		defer bg.Done()
		e.watchServices(runCtx, func(err string) { crashMu.Lock(); crashes = append(crashes, err); crashMu.Unlock() })
	}()
	go func() { defer bg.Done(); e.reportProgress(sending, d, opts) }()
	opts.progress("driving %d bookings as %d customers, %d at a time", opts.Bookings, len(all), opts.Concurrency)
	d.run(runCtx, all, opts.Concurrency, opts.Seed)
	doneSending()
	if _, kills := ws.counts(); kills == 0 {
		// A short drill still loses one worker while its bookings run.
		if err := ws.killOne(rand.New(rand.NewPCG(opts.Seed, 3))); err != nil {
			return nil, err
		}
	}
	opts.progress("all webhooks sent (%s); waiting for every booking to settle", d.traffic.snapshot())
	// Settling reads the database and asks Temporal: it starts once the
	// one-shot crashes (PostgreSQL, Temporal, the outage) are over.
	select {
	case <-oneShotsDone:
	case <-runCtx.Done():
	}
	states, err := e.settle(runCtx, all, opts.SettleTimeout, opts.progress)
	settled()
	if err != nil {
		return nil, err
	}
	r, err := e.report(runCtx, opts, all, states, d.traffic.snapshot(), ws, crashLog)
	if err != nil {
		return nil, err
	}
	if opts.Screenshot != "" {
		if err := e.screenshot(runCtx, opts.Screenshot); err != nil {
			opts.progress("no screenshot of the ops page: %v", err)
		} else {
			opts.progress("ops page screenshot: %s", opts.Screenshot)
		}
	}
	crashMu.Lock()
	r.Failures = append(r.Failures, crashes...)
	crashMu.Unlock()
	r.StartedAt, r.Seconds = started.UTC(), time.Since(started).Seconds()
	r.Passed = len(r.Failures) == 0
	keep = !r.Passed && ctx.Err() == nil
	if keep {
		opts.progress("drill failed: its database %s is kept for the investigation", e.dbName)
	}
	return r, nil
}

// every runs f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

func (e *env) reportProgress(ctx context.Context, d *driver, opts Options) {
	every(ctx, 10*time.Second, func() {
		n, _ := e.count(ctx, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`)
		tr := d.traffic.snapshot()
		opts.progress("%d events sent (%d posts), %d bookings confirmed so far", tr.Events, tr.Posts, n)
	})
}

// report measures everything the report holds.
func (e *env) report(ctx context.Context, opts Options, all []Scenario, states []wishState, tr Traffic, ws *workers, crashes *crashLog) (*Report, error) {
	r := &Report{Seed: opts.Seed, Bookings: len(states), Scenarios: map[Kind]int{}, Traffic: tr,
		Faults: map[string]map[chaos.Fault]int{}, Outcomes: Outcomes{Rejected: map[string]int{}, ByKind: map[Kind]map[Outcome]int{}}}
	for _, s := range all {
		r.Scenarios[s.Kind]++
	}
	for name, p := range e.proxies {
		r.Faults[name] = p.Stats()
	}
	r.WorkersStarted, r.WorkerKills = ws.counts()
	var err error
	if r.Duplicates, r.DuplicatesBy, err = e.duplicates(ctx); err != nil {
		return nil, err
	}
	r.PerThousand = Effects{perThousand(r.Duplicates.Calendar, r.Bookings), perThousand(r.Duplicates.Payment, r.Bookings), perThousand(r.Duplicates.Messages, r.Bookings)}
	if r.Blocked, err = e.blocked(ctx); err != nil {
		return nil, err
	}
	exchanges := e.exchanges.snapshot()
	r.KeyReuse = keyReuse(exchanges)
	if r.UnknownOutcomes, err = e.unknowns(ctx, exchanges); err != nil {
		return nil, err
	}
	if r.ReviewCases, err = e.reviewCases(ctx); err != nil {
		return nil, err
	}
	if r.Genuine, err = e.genuine(ctx, all, states); err != nil {
		return nil, err
	}
	if r.ResultIDs, err = e.resultIDs(ctx, states); err != nil {
		return nil, err
	}
	for _, st := range states {
		if r.Outcomes.ByKind[st.scenario.Kind] == nil {
			r.Outcomes.ByKind[st.scenario.Kind] = map[Outcome]int{}
		}
		r.Outcomes.ByKind[st.scenario.Kind][st.outcome]++
		switch st.outcome {
		case Confirmed:
			r.Outcomes.Confirmed++
		case Rejected:
			r.Outcomes.Rejected[st.reason]++
		case InReview:
			r.Outcomes.InReview++
		default:
			r.Outcomes.Lost++
			if len(r.Outcomes.LostWhy) < 10 {
				r.Outcomes.LostWhy = append(r.Outcomes.LostWhy, fmt.Sprintf("%s wish %d of %s (%s): %s", st.scenario.Kind, st.wish+1, mask.Phones(st.scenario.Customer), st.workflowID, st.reason))
			}
		}
	}
	r.Crashes = crashes.snapshot()
	if err := e.measureStrict(ctx, opts, r, all, states); err != nil {
		return nil, err
	}
	r.check()
	return r, nil
}

// watchServices restarts a service process that died on its own and
// reports it: a crash the drill did not cause is a finding.
func (e *env) watchServices(ctx context.Context, report func(string)) {
	var wg sync.WaitGroup
	for _, svc := range []*service{e.temporal, e.apis[upstreamCalendar], e.apis[upstreamPayments]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := svc.watch(ctx)
				if err == nil {
					return
				}
				report(err.Error())
				if err := svc.start(ctx); err != nil {
					report(err.Error())
				}
			}
		}()
	}
	wg.Wait()
}
