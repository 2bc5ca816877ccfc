package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
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
	load     func(c int) Load // one run of one variant at concurrency c
	reps     int
	concs    []int
	growth   []int // live key counts for the growth measurement, ascending
	growthN  int   // claims measured at each size (concurrency 1)
	reapN    int   // expired keys the reaper deletes
	profile  string
	describe string
}

var smoke = sizes{
	load:    func(c int) Load { return Load{Concurrency: c, Ops: 24} },
	reps:    1,
	concs:   []int{1, 4},
	growth:  []int{1_000, 3_000},
	growthN: 20,
	reapN:   1_500,
}

func full(t *testing.T) sizes {
	growth := []int{10_000, 100_000}
	if s := os.Getenv("BOOKONCE_BENCH_KEYS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "BOOKONCE_BENCH_KEYS")
		if n > growth[len(growth)-1] {
			growth = append(growth, n)
		}
	}
	return sizes{
		load:    func(c int) Load { return Load{Concurrency: c, Duration: 4 * time.Second} },
		reps:    3,
		concs:   []int{1, 16},
		growth:  growth,
		growthN: 1_500,
		reapN:   100_000,
		profile: t.TempDir(),
	}
}

// TestBenchSmoke runs every measurement at tiny sizes and checks that the
// load did what it claims (every op succeeded, the effects are in the
// database). It asserts no timing: the numbers come from TestBenchFull.
func TestBenchSmoke(t *testing.T) {
	rep := &report{}
	t.Run("holds", func(t *testing.T) { rep.holds = measureHolds(t, smoke) })
	t.Run("claim", func(t *testing.T) { rep.claim = measureClaim(t, smoke) })
	t.Run("growth", func(t *testing.T) { rep.growth = measureGrowth(t, smoke) })
	t.Run("reaper", func(t *testing.T) { rep.reaper = measureReaper(t, smoke) })
	t.Log("\n" + rep.tables())
}

// TestBenchFull runs the real sizes (a few minutes) and writes
// docs/benchmarks.md. BOOKONCE_BENCH_KEYS=1000000 adds a growth step.
func TestBenchFull(t *testing.T) {
	if os.Getenv("BOOKONCE_BENCH") != "1" {
		t.Skip("set BOOKONCE_BENCH=1 to run the full benchmark (several minutes)")
	}
	sz := full(t)
	rep := &report{started: time.Now()}
	t.Run("holds", func(t *testing.T) { rep.holds = measureHolds(t, sz) })
	t.Run("claim", func(t *testing.T) { rep.claim = measureClaim(t, sz) })
	t.Run("growth", func(t *testing.T) { rep.growth = measureGrowth(t, sz) })
	t.Run("reaper", func(t *testing.T) { rep.reaper = measureReaper(t, sz) })
	rep.elapsed = time.Since(rep.started)
	doc := rep.markdown()
	fmt.Println(doc)
	require.NoError(t, os.MkdirAll("../docs", 0o755))
	require.NoError(t, os.WriteFile("../docs/benchmarks.md", []byte(doc), 0o644))
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

// profiled runs op once more under a CPU profile and returns the top
// functions as pprof prints them (empty when dir is empty).
func profiled(t *testing.T, dir, name string, l Load, op Op) string {
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, name+".pprof")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(f))
	r := Run(context.Background(), l, op)
	pprof.StopCPUProfile()
	require.NoError(t, f.Close())
	require.Zero(t, r.Errors, "profiled run: %v", r.FirstErr)
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	var out strings.Builder
	for _, args := range [][]string{
		{"tool", "pprof", "-top", "-nodecount=12", path},
		{"tool", "pprof", "-top", "-cum", "-nodecount=30", "-focus=bookonce|pgx|net/http", path},
	} {
		b, err := exec.Command(goBin, args...).CombinedOutput()
		if err != nil {
			out.WriteString("pprof failed: " + err.Error() + "\n")
		}
		out.Write(b)
		out.WriteString("\n")
	}
	return out.String()
}

// ---- item 1 -------------------------------------------------------------

type holdsResult struct {
	series  []*series // variant-major, then concurrency
	plain   bool      // the variant without middleware was measured
	profile map[string]string
}

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
	seq := 0
	total := make([]int, len(variants))
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
				r := measured(context.Background(), ss[i], l, ops[i](fmt.Sprintf("h%d-", i)))
				require.Zero(t, r.Errors, "%s c=%d: %v", variants[i].name, c, r.FirstErr)
				require.NotZero(t, r.Ops)
				seq += r.Ops
				total[i] += r.Ops
				t.Logf("%s: %v", variants[i].name, r)
			}
		}
		res.series = append(res.series, ss...)
	}
	// Every op booked its own slot, and only the middleware kept keys.
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference LIKE 'bench-ref-%' AND status = 'held'`))
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

type claimResult struct {
	series  []*series
	profile map[string]string
}

func measureClaim(t *testing.T, sz sizes) claimResult {
	e := newEnv(t)
	client := newClient()
	mw := noopServer(t, idempotency.NewStore(e.pool, idempotency.Options{}))
	raw := rawHTTPServer(t, e.pool)
	variants := []struct {
		name string
		op   func(prefix string) Op
	}{
		{"raw pgx INSERT ON CONFLICT + UPDATE (floor)", func(p string) Op { return rawClaim(e.pool, p) }},
		{"raw pgx behind loopback HTTP", func(p string) Op { return noopOpFunc(client, raw.URL, p) }},
		{"middleware, no-op handler, loopback HTTP", func(p string) Op { return noopOpFunc(client, mw.URL, p) }},
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
				r := measured(context.Background(), ss[i], l, v.op(fmt.Sprintf("c%d-", i)))
				require.Zero(t, r.Errors, "%s c=%d: %v", v.name, c, r.FirstErr)
				seq += r.Ops
				n += r.Ops
				t.Logf("%s: %v", v.name, r)
			}
		}
		res.series = append(res.series, ss...)
	}
	require.Equal(t, n, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys WHERE operation = $1 AND state = 'completed'`, noopOp))
	c := sz.concs[len(sz.concs)-1]
	for _, i := range []int{0, 2} {
		l := sz.load(c)
		l.SeqBase = seq + 1<<22*(i+1)
		if p := profiled(t, sz.profile, fmt.Sprintf("claim-%d", i), l, variants[i].op(fmt.Sprintf("q%d-", i))); p != "" {
			res.profile[fmt.Sprintf("%s, c=%d", variants[i].name, c)] = p
		}
	}
	return res
}

// ---- item 3 -------------------------------------------------------------

type growthResult struct {
	sizes  []int
	series []*series
}

func measureGrowth(t *testing.T, sz sizes) growthResult {
	e := newEnv(t)
	client := newClient()
	srv := noopServer(t, idempotency.NewStore(e.pool, idempotency.Options{}))
	res := growthResult{sizes: sz.growth}
	have, seq := 0, 0
	for _, n := range sz.growth {
		preloadKeys(t, e.pool, noopOp, have, n-have, false)
		have = n
		s := &series{variant: fmt.Sprintf("%d live keys", n), conc: 1}
		for range sz.reps {
			r := measured(context.Background(), s, Load{Concurrency: 1, Ops: sz.growthN, SeqBase: seq}, noopOpFunc(client, srv.URL, "g-"))
			require.Zero(t, r.Errors, "%d keys: %v", n, r.FirstErr)
			require.Equal(t, sz.growthN, r.Ops)
			seq += r.Ops
			t.Logf("%d keys: %v", n, r)
		}
		res.series = append(res.series, s)
	}
	require.Equal(t, have+seq, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys WHERE operation = $1`, noopOp))
	return res
}

type reapRun struct {
	deleted     int
	total       time.Duration
	maxDuring   time.Duration // longest claim that overlapped the reap
	p99During   time.Duration
	maxBefore   time.Duration // longest claim before the reap started
	claimsDured int
}

type reaperResult struct {
	n    int
	runs []reapRun
}

// measureReaper preloads n expired keys, then deletes them the way
// RunReaper does (batches of 500 until a batch comes back short) while
// four clients keep claiming new keys, and records how long the longest
// claim waited meanwhile.
func measureReaper(t *testing.T, sz sizes) reaperResult {
	e := newEnv(t)
	client := newClient()
	store := idempotency.NewStore(e.pool, idempotency.Options{})
	srv := noopServer(t, store)
	res := reaperResult{n: sz.reapN}
	seq := 0
	const lead = 500 * time.Millisecond
	for rep := range sz.reps {
		preloadKeys(t, e.pool, "POST /bench/expired", rep*sz.reapN, sz.reapN, true)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Result)
		go func() {
			done <- Run(ctx, Load{Concurrency: 4, Duration: 30 * time.Minute, SeqBase: seq}, noopOpFunc(client, srv.URL, "r-"))
		}()
		time.Sleep(lead)
		var run reapRun
		t0 := time.Now()
		for {
			n, err := store.Reap(context.Background(), 500)
			require.NoError(t, err)
			run.deleted += n
			if n < 500 {
				break
			}
		}
		run.total = time.Since(t0)
		time.Sleep(lead)
		cancel()
		r := <-done
		seq += r.Ops
		require.Zero(t, r.Errors, "claims during reap: %v", r.FirstErr)
		require.Equal(t, sz.reapN, run.deleted)
		// The load began at most a few microseconds before the first
		// sleep started, so lead is the reap's start offset.
		during := r.Window(lead, lead+run.total)
		before := r.Window(0, lead)
		run.claimsDured = len(during)
		run.maxDuring, run.p99During = Percentile(during, 1), Percentile(during, 0.99)
		run.maxBefore = Percentile(before, 1)
		require.NotZero(t, len(during), "no claim ran during the reap")
		t.Logf("reaped %d in %v; %d claims meanwhile, max %v p99 %v; max before %v",
			run.deleted, run.total, len(during), run.maxDuring, run.p99During, run.maxBefore)
		res.runs = append(res.runs, run)
	}
	require.Zero(t, countRows(t, e.pool, `SELECT count(*) FROM idempotency_keys WHERE expires_at <= now()`))
	return res
}
