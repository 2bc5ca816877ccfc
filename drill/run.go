package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
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
	if !opts.Topology.valid() {
		return nil, fmt.Errorf("unknown topology %q (%s or %s)", opts.Topology, TopologySingle, TopologyScaled)
	}
	if err := opts.prepareLogDir(); err != nil {
		return nil, err
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
	var r *Report
	r, keep, err = drive(ctx, opts, e, ws, started)
	return r, err
}

// prepareLogDir makes sure the worker log directory exists, in a fresh
// temporary directory unless LogDir names one.
func (o *Options) prepareLogDir() error {
	if o.LogDir == "" {
		dir, err := os.MkdirTemp("", "bookonce-drill-")
		if err != nil {
			return err
		}
		o.LogDir = dir
	} else if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return fmt.Errorf("worker log directory: %w", err)
	}
	return nil
}

// drive runs the drill on a started stack and workers: it sends every
// scenario's traffic while the faults fire, waits for every booking to
// settle and reports. keep says whether the drill failed, so that its
// database is kept for the investigation.
func drive(ctx context.Context, opts Options, e *env, ws *workers, started time.Time) (_ *Report, keep bool, _ error) {
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	all, sl := generate(opts.Bookings, rng, e.cfg.Timezone, time.Now(), int(opts.Seed%100))
	// The changes draw from a stream of their own: a seed's scenarios stay.
	planChanges(all, rand.New(rand.NewPCG(opts.Seed, 5)), sl, ChangeShares{opts.CancelShare, opts.RescheduleShare, opts.RebookShare, opts.EarlyCancelShare})
	markWindows(all, opts.StaleWindowShare, opts.StopShare)
	markShops(all, opts.SecondShopShare)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var bg sync.WaitGroup
	defer bg.Wait()
	defer stopRun()
	var crashes crashList
	bg.Add(2)
	go func() { defer bg.Done(); e.operate(runCtx, e.byConversation(all)) }()
	go func() { defer bg.Done(); ws.restartCrashed(runCtx, &crashes) }()

	d := newDriver(e, opts.Concurrency)
	d.closeWindow = e.closeWindow
	e.changes = newChanger(e, d, opts.Changes, opts.Seed)
	e.changes.plan(all)
	changing, stopChanging := context.WithCancel(runCtx)
	defer stopChanging()
	bg.Add(1)
	go func() { defer bg.Done(); e.changes.run(changing, runCtx, all) }()
	// The customers pay the links they receive until every booking settled.
	pay := newPayer(e.twilio, opts.Seed)
	pay.customers = e.changes
	paying, stopPaying := context.WithCancel(runCtx)
	defer stopPaying()
	bg.Add(1)
	go func() { defer bg.Done(); pay.run(paying, 250*time.Millisecond) }()
	// Kills go on until everything settled: most activities run after the
	// webhooks were accepted, while the workers work off the backlog.
	inFlight, settled := context.WithCancel(runCtx)
	defer settled()
	sending, doneSending := context.WithCancel(runCtx)
	crashLog := &crashLog{start: started}
	var dep *deployer
	if opts.Crashes.Deploy {
		dep = newDeployer(ws, e.tc, e.cfg.TemporalNamespace, started, opts.progress)
	}
	oneShotsDone := e.injectFaults(runCtx, inFlight, sending.Done(), &bg, ws, opts, crashLog, &crashes, dep.promotion())
	if dep != nil {
		bg.Add(1)
		go func() { defer bg.Done(); dep.run(runCtx, inFlight.Done()) }()
	}
	bg.Add(1)
	go func() { defer bg.Done(); e.reportProgress(sending, d, opts) }()
	// The front desks enter appointments in the shops' calendars while
	// the customers write.
	staffing, stopStaff := context.WithCancel(runCtx)
	defer stopStaff()
	if e.cals != nil {
		e.staff = newStaff(e.cals, all, e.serviceDuration, opts.Seed)
		bg.Add(1)
		go func() { defer bg.Done(); e.staff.run(staffing, 700*time.Millisecond) }()
	}
	opts.progress("driving %d bookings as %d customers, %d at a time", opts.Bookings, len(all), opts.Concurrency)
	firstWebhook := time.Now()
	d.run(runCtx, all, opts.Concurrency, opts.Seed)
	doneSending()
	stopStaff()
	if _, kills := ws.counts(); kills == 0 {
		// A short drill still loses one worker while its bookings run.
		if err := ws.killOne(rand.New(rand.NewPCG(opts.Seed, 3))); err != nil {
			return nil, false, err
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
	throughput := newThroughput(len(states), firstWebhook, time.Now())
	if err == nil {
		// The last bookings' changes go out now; their effects settle
		// while the kills go on.
		stopChanging()
		e.changes.finish(runCtx, all)
		e.settleChanges(runCtx, max(time.Minute, opts.SettleTimeout/4), opts.progress)
	}
	settled()
	stopPaying()
	if err != nil {
		return nil, false, err
	}
	r, err := e.report(runCtx, opts, all, states, d.traffic.snapshot(), ws, crashLog)
	if err != nil {
		return nil, false, err
	}
	r.Topology, r.Throughput = e.topologyReport(), throughput
	r.Payments = pay.snapshot()
	r.Agent = d.agent.snapshot(e.twilio)
	r.Failures = append(r.Failures, r.Agent.failures()...)
	r.Relay = d.relay.snapshot()
	r.Failures = append(r.Failures, r.Relay.failures()...)
	var refused []string
	r.ProviderRefused, refused, r.Templates = refusedByProvider(e.twilio.Messages())
	if n := sumCounts(r.ProviderRefused); n > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d messages refused by the provider's rules (by Twilio error code: %v; %s)", n, r.ProviderRefused, strings.Join(refused, "; ")))
	}
	if r.OptOuts, err = e.optOuts(runCtx, all, e.twilio.Messages()); err != nil {
		return nil, false, err
	}
	r.Failures = append(r.Failures, r.OptOuts.failures()...)
	r.Senders = senders(all, e.shops, e.twilio.Messages())
	r.Failures = append(r.Failures, r.Senders.failures(all)...)
	if r.ShopCalendars, err = e.shopCalendars(runCtx, opts.OrphanWait); err != nil {
		return nil, false, err
	}
	r.Failures = append(r.Failures, r.ShopCalendars.failures()...)
	if r.Payments.Failed > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d payment links could not be paid: %v", r.Payments.Failed, r.Payments.Errors))
	}
	if r.Deploy, err = dep.report(runCtx); err != nil {
		return nil, false, err
	}
	if r.Deploy != nil {
		r.Failures = append(r.Failures, r.Deploy.failures()...)
	}
	if r.NonDeterminism, err = nonDeterminism(opts.LogDir); err != nil {
		return nil, false, err
	}
	if r.NonDeterminism > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d non-determinism errors (TMPRL1100) in the worker logs in %s", r.NonDeterminism, opts.LogDir))
	}
	e.screenshotIfAsked(runCtx, opts)
	r.Failures = append(r.Failures, crashes.list()...)
	r.StartedAt, r.Seconds = started.UTC(), time.Since(started).Seconds()
	r.Passed = len(r.Failures) == 0
	keep = !r.Passed && ctx.Err() == nil
	if keep {
		opts.progress("drill failed: its database %s is kept for the investigation", e.dbName)
	}
	return r, keep, nil
}

// byConversation indexes the scenarios by their customer's conversation
// ID, the workflow ID review cases name.
func (e *env) byConversation(all []Scenario) map[string]Scenario {
	m := map[string]Scenario{}
	for _, s := range all {
		m[e.conversationID(s)] = s
	}
	return m
}

// injectFaults starts the fault injectors under bg: worker kills every
// KillEvery and API kills while inFlight lasts, the one-shot crashes
// (the returned channel closes when they are over; the Temporal restart
// waits for promoted unless it is nil) and the watch on the services,
// whose crashes go to crashes.
func (e *env) injectFaults(runCtx, inFlight context.Context, sent <-chan struct{}, bg *sync.WaitGroup, ws *workers, opts Options, log *crashLog, crashes *crashList, promoted <-chan struct{}) <-chan struct{} {
	killRng := rand.New(rand.NewPCG(opts.Seed, 2)) // the killer's own: rand.Rand is not safe for concurrent use
	c := &conductor{crashes: *opts.Crashes, apis: e.apis, temporal: e.temporal, cluster: e.cluster,
		log: log, progress: opts.progress, db: &e.db, sent: sent, providers: e.cals.gateList(), promoted: promoted}
	oneShotsDone := make(chan struct{})
	bg.Add(4)
	go func() { defer bg.Done(); every(inFlight, opts.KillEvery, c.killWorker(ws, killRng)) }()
	go func() { defer bg.Done(); c.killAPIs(inFlight, rand.New(rand.NewPCG(opts.Seed, 4))) }()
	go func() { defer bg.Done(); defer close(oneShotsDone); c.oneShots(runCtx) }()
	go func() { defer bg.Done(); e.watchServices(runCtx, crashes.add) }()
	return oneShotsDone
}

// crashList collects the crashes the background watchers report; they
// report concurrently.
type crashList struct {
	mu    sync.Mutex
	items []string
}

// add records one crash.
func (c *crashList) add(crash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = append(c.items, crash)
}

// list returns the crashes recorded so far.
func (c *crashList) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.items...)
}

// screenshotIfAsked saves a screenshot of the ops page if the options
// ask for one; failing to is reported, not fatal.
func (e *env) screenshotIfAsked(ctx context.Context, opts Options) {
	if opts.Screenshot == "" {
		return
	}
	if err := e.screenshot(ctx, opts.Screenshot); err != nil {
		opts.progress("no screenshot of the ops page: %v", err)
	} else {
		opts.progress("ops page screenshot: %s", opts.Screenshot)
	}
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
	tr.HeldForOutage = e.db.held.Load()
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
	if r.Duplicates, r.DuplicatesBy, r.DuplicateExamples, err = e.duplicates(ctx); err != nil {
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
	r.SearchLag = e.searchLag()
	if err := e.measureStrict(ctx, opts, r, all, states); err != nil {
		return nil, err
	}
	if r.Changes, err = e.changeReport(ctx, opts, all, states); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	r.check()
	return r, nil
}

// watchServices restarts a service process that died on its own and
// reports it: a crash the drill did not cause is a finding.
func (e *env) watchServices(ctx context.Context, report func(string)) {
	var wg sync.WaitGroup
	for _, svc := range append([]*service{e.temporal}, killTargets(e.apis)...) {
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
