package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
)

// sizes is how much each measurement does.
type sizes struct {
	load     func(c int) Load // one run of one variant at concurrency c (items 1-3)
	reps     int
	concs    []int
	e2eLoad  func(c int) Load // one run of item 4 at concurrency c
	e2eConcs []int
	growth   []int // live key counts for the growth measurement, ascending
	growthN  int   // claims measured at each size (concurrency 1)
	reapN    int   // expired keys the reaper deletes
	reapReps int
	profile  string // directory for CPU profiles; empty: none
	voice    voiceLoad
	latency  latencySizes
	syncLag  syncLagLoad
	pushLag  syncLagLoad
	tools    toolsSizes
}

var smoke = sizes{
	load:     func(c int) Load { return Load{Concurrency: c, Ops: 24} },
	reps:     1,
	concs:    []int{1, 4},
	e2eLoad:  func(c int) Load { return Load{Concurrency: c, Ops: 2} },
	e2eConcs: []int{1, 2},
	growth:   []int{1_000, 3_000},
	growthN:  20,
	reapN:    1_500,
	reapReps: 1,
	voice:    voiceLoad{rates: []int{20}, perRun: 250 * time.Millisecond, reps: 1},
	latency:  latencySizes{n: 3, reps: 1, rssWindow: 250 * time.Millisecond},
	syncLag:  syncLagLoad{poll: 300 * time.Millisecond, samples: 2},
	pushLag:  syncLagLoad{poll: time.Hour, samples: 2, push: true},
	tools:    toolsSizes{n: 3, reps: 1},
}

// full is the `make bench` run: about ten minutes on two cores, and 25
// more for the latency item.
// BOOKONCE_BENCH_KEYS lowers (or raises) the largest key count, for a
// quicker run while working on the benchmark itself.
func full(t *testing.T) sizes {
	keys := 1_000_000
	if s := os.Getenv("BOOKONCE_BENCH_KEYS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "BOOKONCE_BENCH_KEYS")
		keys = n
	}
	var growth []int
	for _, n := range []int{10_000, 100_000} {
		if n < keys {
			growth = append(growth, n)
		}
	}
	return sizes{
		load:     func(c int) Load { return Load{Concurrency: c, Duration: 3 * time.Second} },
		reps:     3,
		concs:    []int{1, 16},
		e2eLoad:  func(c int) Load { return Load{Concurrency: c, Duration: 10 * time.Second} },
		e2eConcs: []int{1, 8},
		growth:   append(growth, keys),
		growthN:  1_000,
		reapN:    keys,
		reapReps: 2,
		profile:  t.TempDir(),
		voice:    voiceLoad{rates: []int{20, 50}, perRun: 6 * time.Second, reps: 3},
		latency:  fullLatency(t),
		syncLag:  syncLagLoad{poll: 30 * time.Second, samples: 12},
		pushLag:  syncLagLoad{poll: time.Hour, samples: 20, push: true},
		tools:    toolsSizes{n: 300, reps: 3},
	}
}

// TestBenchSmoke runs every measurement at tiny sizes and checks that the
// load did what it claims (every op succeeded, the effects are in the
// database). It asserts no timing: the numbers come from TestBenchFull.
func TestBenchSmoke(t *testing.T) {
	run(t, smoke, &report{})
}

// TestBenchFull runs the real sizes and writes docs/benchmarks.md.
func TestBenchFull(t *testing.T) {
	if os.Getenv("BOOKONCE_BENCH") != "1" {
		t.Skip("set BOOKONCE_BENCH=1 to run the full benchmark (about 35 minutes)")
	}
	rep := &report{started: time.Now(), full: true}
	run(t, full(t), rep)
	rep.elapsed = time.Since(rep.started)
	doc := rep.markdown()
	fmt.Println(doc)
	const path = "../docs/benchmarks.md"
	old, err := os.ReadFile(path)
	if err == nil && os.Getenv("BOOKONCE_BENCH_ONLY") != "" {
		items, _ := rep.tables()
		doc = replaceSections(string(old), items)
	} else if err == nil {
		doc = keepHandWritten(string(old), doc)
	}
	require.NoError(t, os.MkdirAll("../docs", 0o755))
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
}

// run measures every item in issue order; BOOKONCE_BENCH_ONLY (a
// comma-separated list of holds, claim, ingest, e2e, growth, reaper, voice,
// redis, latency, synclag, tools)
// restricts it while working on one item.
func run(t *testing.T, sz sizes, rep *report) {
	only := os.Getenv("BOOKONCE_BENCH_ONLY")
	item := func(name string, f func(t *testing.T)) {
		if only == "" || slices.Contains(strings.Split(only, ","), name) {
			t.Run(name, f)
		}
	}
	item("holds", func(t *testing.T) { rep.holds = measureHolds(t, sz) })
	item("claim", func(t *testing.T) { rep.claim = measureClaim(t, sz) })
	item("ingest", func(t *testing.T) { rep.ingest = measureIngest(t, sz) })
	item("e2e", func(t *testing.T) { rep.e2e = measureE2E(t, sz) })
	item("growth", func(t *testing.T) { rep.growth = measureGrowth(t, sz) })
	item("reaper", func(t *testing.T) { rep.reaper = measureReaper(t, sz) })
	item("voice", func(t *testing.T) { rep.voice = measureVoice(t, sz.voice) })
	item("redis", func(t *testing.T) { rep.redis = measureRedis(t, sz) })
	item("latency", func(t *testing.T) { rep.latency = measureLatency(t, sz.latency) })
	item("synclag", func(t *testing.T) {
		rep.syncLag = measureSyncLag(t, sz.syncLag)
		rep.pushLag = measurePushLag(t, sz.pushLag)
	})
	item("tools", func(t *testing.T) { rep.tools = measureTools(t, sz.tools) })
	tables, _ := rep.tables()
	t.Log("\n" + tables)
}

// series is the repeated runs of one variant at one concurrency.
type series struct {
	variant string
	conc    int
	runs    []Result
	cpuGo   []time.Duration // process CPU per op, per run
	cpuPG   []time.Duration // postgres CPU per op, per run
}

func (s *series) add(r Result, goCPU, pgCPU time.Duration) {
	s.runs = append(s.runs, r)
	ok := max(1, r.Ops-r.Errors)
	s.cpuGo = append(s.cpuGo, goCPU/time.Duration(ok))
	s.cpuPG = append(s.cpuPG, pgCPU/time.Duration(ok))
}

func (s *series) spread(f func(Result) float64) Spread {
	var xs []float64
	for _, r := range s.runs {
		xs = append(xs, f(r))
	}
	return SpreadOf(xs)
}

func durSpread(ds []time.Duration) Spread {
	var xs []float64
	for _, d := range ds {
		xs = append(xs, ms(d))
	}
	return SpreadOf(xs)
}

// measured runs op under load and records the run with the CPU it used.
func measured(ctx context.Context, s *series, l Load, op Op) Result {
	g0, p0 := cpuTimes()
	r := Run(ctx, l, op)
	g1, p1 := cpuTimes()
	s.add(r, g1-g0, pgDelta(p0, p1))
	return r
}

// measure runs one measured run of s's variant, requires that every op
// succeeded and logs the run.
func measure(t *testing.T, s *series, l Load, op Op) Result {
	r := measured(context.Background(), s, l, op)
	require.Zero(t, r.Errors, "%s c=%d: %v", s.variant, s.conc, r.FirstErr)
	require.NotZero(t, r.Ops, "%s c=%d", s.variant, s.conc)
	t.Logf("%s: %v", s.variant, r)
	return r
}

// ---- item 1 -------------------------------------------------------------

type holdsResult struct {
	series  []*series // variant-major, then concurrency
	paired  []*series // c=1, alternating op by op: without, with
	plain   bool      // the variant without middleware was measured
	profile map[string]string
}

// Names of the op-by-op interleaved halves of item 1.
const (
	holdsPairedWithout = "without middleware (op by op)"
	holdsPairedWith    = "with middleware (op by op)"
)

func measureHolds(t *testing.T, sz sizes) holdsResult {
	e := newEnv(t)
	seedResources(t, e.pool)
	variants := []calendarVariant{
		{"with middleware", withMiddleware(0)},
		{"with middleware + tenant quota", withMiddleware(1 << 30)},
	}
	res := holdsResult{profile: map[string]string{}}
	if plainStore != nil {
		variants = append([]calendarVariant{{"without middleware", plainStore}}, variants...)
		res.plain = true
	}
	client := newClient()
	ops := make([]func(prefix string) Op, len(variants))
	for i, v := range variants {
		srv := calendarServer(t, e.cfg, e.pool, v.store(e.pool))
		ops[i] = func(prefix string) Op { return holdOp(client, srv.URL, e.cfg.Timezone, prefix) }
	}
	seq, booked := 0, 0
	total := make([]int, len(variants))
	if res.plain {
		// Op by op at c=1: even ops without the middleware, odd ones with
		// it, so that both halves meet the same moments of a noisy machine.
		// First, while the reservations table is small.
		wo, w := &series{variant: holdsPairedWithout, conc: 1}, &series{variant: holdsPairedWith, conc: 1}
		without, with := ops[0]("i0-"), ops[1]("i1-")
		for range sz.reps {
			l := sz.load(1)
			l.SeqBase = seq + seq%2
			r := Run(context.Background(), l, func(ctx context.Context, seq int) error {
				if seq%2 == 0 {
					return without(ctx, seq)
				}
				return with(ctx, seq)
			})
			require.Zero(t, r.Errors, "interleaved: %v", r.FirstErr)
			even, odd := r.Split()
			wo.add(even, 0, 0)
			w.add(odd, 0, 0)
			seq, total[1], booked = l.SeqBase+r.Ops, total[1]+odd.Ops, booked+r.Ops
			t.Logf("interleaved: without %v; with %v", even, odd)
		}
		res.paired = []*series{wo, w}
	}
	for _, c := range sz.concs {
		ss := make([]*series, len(variants))
		for i, v := range variants {
			ss[i] = &series{variant: v.name, conc: c}
		}
		// Interleaved, so that table growth and machine noise hit every
		// variant alike.
		for range sz.reps {
			for i := range variants {
				l := sz.load(c)
				l.SeqBase = seq
				r := measure(t, ss[i], l, ops[i](fmt.Sprintf("h%d-", i)))
				seq += r.Ops
				total[i] += r.Ops
				booked += r.Ops
			}
		}
		res.series = append(res.series, ss...)
	}
	// Every op booked its own slot, and only the middleware kept keys.
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference LIKE 'bench-ref-%' AND status = 'held'`))
	keys := 0
	for i, v := range variants {
		if strings.HasPrefix(v.name, "with ") {
			keys += total[i]
		}
	}
	require.Equal(t, keys, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys WHERE operation = $1 AND state = 'completed' AND status_code = 201`, calendar.OpCreateHold))

	c := sz.concs[len(sz.concs)-1]
	for i, v := range variants {
		if v.name == "with middleware + tenant quota" {
			continue
		}
		l := sz.load(c)
		l.SeqBase = seq
		p := profiled(t, sz.profile, fmt.Sprintf("holds-%d", i), l, ops[i](fmt.Sprintf("p%d-", i)))
		if p != "" {
			res.profile[fmt.Sprintf("%s, c=%d", v.name, c)] = p
			seq += 1 << 20 // the profiled run's ops are not counted; skip past them
		}
	}
	return res
}

// ---- item 2 -------------------------------------------------------------

// Variant names of item 2 the report looks up.
const (
	claimFloor      = "raw pgx INSERT ON CONFLICT + UPDATE (floor)"
	claimFloorAsync = "raw pgx, INSERT with asynchronous commit + UPDATE"
	claimStore      = "store: middleware + no-op handler, called in-process"
	claimHTTP       = "store: middleware + no-op handler, loopback HTTP"
)

type claimResult struct {
	series  []*series
	profile map[string]string
}

func measureClaim(t *testing.T, sz sizes) claimResult {
	e := newEnv(t)
	client := newClient()
	store := idempotency.NewStore(e.pool, idempotency.Options{})
	mw, direct := noopServer(t, store), noopHandler(store)
	variants := []struct {
		name string
		op   func(prefix string) Op
	}{
		{claimFloor, func(p string) Op { return rawClaim(e.pool, p, false) }},
		{claimStore, func(p string) Op { return inProcessOp(direct, p) }},
		{claimFloorAsync, func(p string) Op { return rawClaim(e.pool, p, true) }},
		{claimHTTP, func(p string) Op { return noopOpFunc(client, mw.URL, p) }},
		{claimShape, func(p string) Op { return shapedClaim(e.pool, p) }},
	}
	res := claimResult{profile: map[string]string{}}
	seq, n := 0, 0
	for _, c := range sz.concs {
		ss := make([]*series, len(variants))
		for i, v := range variants {
			ss[i] = &series{variant: v.name, conc: c}
		}
		for range sz.reps {
			for i, v := range variants {
				l := sz.load(c)
				l.SeqBase = seq
				r := measure(t, ss[i], l, v.op(fmt.Sprintf("c%d-", i)))
				seq += r.Ops
				n += r.Ops
			}
		}
		res.series = append(res.series, ss...)
	}
	require.Equal(t, n, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys WHERE operation = $1 AND state = 'completed'`, noopOp))
	c := sz.concs[len(sz.concs)-1]
	for _, i := range []int{0, 1} {
		l := sz.load(c)
		l.SeqBase = seq + 1<<22*(i+1)
		if p := profiled(t, sz.profile, fmt.Sprintf("claim-%d", i), l, variants[i].op(fmt.Sprintf("q%d-", i))); p != "" {
			res.profile[fmt.Sprintf("%s, c=%d", variants[i].name, c)] = p
		}
	}
	return res
}
