package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// ---- latency: webhook -> Confirmed at a steady rate ----------------------

// The rates: the latency item's steady arrivals and the memory
// reading's load.
const (
	latencyEvery = 200 * time.Millisecond // 5 bookings/s
	rssEvery     = 50 * time.Millisecond  // 20 bookings/s
	// latencySlots distinct slots are booked in turn (about 250 working
	// days of 10 afternoon slots, within a year, so "am 4.12." is
	// unambiguous); a slot's next booking comes latencySlots bookings
	// later, long after the first has finished.
	latencySlots = 2_500
)

// latencySizes is how much the latency item does.
type latencySizes struct {
	n         int           // bookings per run
	reps      int           // runs
	rssWindow time.Duration // driving 20 bookings/s for the memory reading
}

// fullLatency is 2,000 bookings per run unless BOOKONCE_BENCH_LATENCY_N says
// otherwise (a shorter run while tuning).
func fullLatency(t *testing.T) latencySizes {
	n := 2_000
	if s := os.Getenv("BOOKONCE_BENCH_LATENCY_N"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err, "BOOKONCE_BENCH_LATENCY_N")
	}
	return latencySizes{n: n, reps: 3, rssWindow: 10 * time.Second}
}

// newLatencyEnv is the stack as `make run` wires it: the production worker
// (stack.Worker: its options, the reconciler, the dedup check of ended
// appointments) and the outbox relay sending through the fake Twilio
// every stack.SendEvery, on an embedded server of its own that keeps its
// state in a SQLite file with make run's settings (the other items share
// the tests' in-memory server, which grows slower as it fills: every page
// sits in SQLite's page cache).
func newLatencyEnv(t *testing.T) e2eEnv {
	e := newStackEnvOn(t, makeRunTemporal(t), func(tc client.Client, cfg config.Config, pool *pgxpool.Pool) {
		reg := testsupport.Tenants(t, pool)
		w, _ := stack.Worker(tc, cfg, pool, reg)
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
		tw, fake := stack.DevTwilio(cfg, reg)
		t.Cleanup(fake.Close)
		sender := stack.OutboxSender(cfg, pool, tw, stack.Logger(cfg, os.Stderr))
		ctx, cancel := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() { _ = sender.Run(ctx, stack.SendEvery) })
		t.Cleanup(func() { cancel(); done.Wait() })
	})
	e.slots = latencySlots
	e.lookEvery = 500 * time.Millisecond
	return e
}

// makeRunTemporal starts a server as cmd/dev does (a database file,
// config's default TEMPORAL_DB_SYNC) with bookonce's search attributes,
// and returns a client of it.
func makeRunTemporal(t *testing.T) client.Client {
	return makeRunTemporalIn(t, t.TempDir())
}

// makeRunTemporalIn is makeRunTemporal with its database file in dir.
func makeRunTemporalIn(t *testing.T, dir string) client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: "127.0.0.1:0", DatabaseFile: filepath.Join(dir, "temporal.db"), Sync: devserver.Sync(cfg.TemporalDBSync),
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ts.Stop()) })
	return dialBenchServer(t, ts.HostPort())
}

// latencyRun is one run of the latency item.
type latencyRun struct {
	r      Result
	lag    time.Duration // the open loop's largest start delay
	phases phaseHists    // this run's observations
}

type latencyResult struct {
	runs    []latencyRun
	n       int
	rssIdle memReading
	rssLoad memReading // the largest reading while driving 20 bookings/s
	rssN    int        // bookings during that window
}

func measureLatency(t *testing.T, sz latencySizes) latencyResult {
	e := newLatencyEnv(t)
	phases := prometheus.NewRegistry()
	require.NoError(t, phases.Register(telemetry.BookingPhases))
	res := latencyResult{n: sz.n, rssIdle: mustReadMem(t)}
	// One booking first, to warm up.
	warm, _ := OpenLoop{N: 1, Every: latencyEvery}.Run(context.Background(), e.bookingOp(t))
	require.Zero(t, warm.Errors, "first booking: %v", warm.FirstErr)
	seq := 1
	awaitSent(t, e, seq)
	for range sz.reps {
		before := gatherPhases(t, e.gwReg, phases)
		r, lag := OpenLoop{N: sz.n, Every: latencyEvery, SeqBase: seq}.Run(context.Background(), e.bookingOp(t))
		requireOnlySlow(t, r)
		seq += r.Ops
		// The next run starts when every booking of this one has ended
		// and its confirmation has gone out, so that runs do not overlap.
		awaitSent(t, e, seq)
		run := latencyRun{r: r, lag: lag, phases: gatherPhases(t, e.gwReg, phases).minus(before)}
		for _, p := range telemetry.Phases {
			require.Equal(t, uint64(r.Ops), run.phases[p].count, "observations of phase %s", p)
		}
		res.runs = append(res.runs, run)
		t.Logf("latency at 5/s: %v; start lag %v; mean ms since accepted: %s", r, lag, run.phases.means())
	}
	rss := OpenLoop{N: int(sz.rssWindow / rssEvery), Every: rssEvery, SeqBase: seq}
	r, peak := whileSampling(t, func() Result { r, _ := rss.Run(context.Background(), e.bookingOp(t)); return r })
	requireOnlySlow(t, r)
	seq += r.Ops
	res.rssLoad, res.rssN = peak, r.Ops
	t.Logf("memory idle %+v, driving 20 bookings/s %+v (%v)", res.rssIdle, res.rssLoad, r)
	// Effects: one confirmed reservation, one captured deposit and one
	// confirmation sent per booking.
	awaitSent(t, e, seq)
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`))
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded'`))
	require.Equal(t, seq, countRows(t, e.pool, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND state <> 'pending'`))
	return res
}

// requireOnlySlow fails on a booking that ended other than Confirmed;
// one not Confirmed within bookingOp's wait (awaitResult) is slow, not
// wrong: it is reported (as its latency, the wait), and awaitSent waits
// for it before the next run.
func requireOnlySlow(t *testing.T, r Result) {
	for _, s := range r.Samples {
		var deadline *serviceerror.DeadlineExceeded
		if s.Err != nil && !errors.Is(s.Err, context.DeadlineExceeded) && !errors.As(s.Err, &deadline) {
			require.NoError(t, s.Err, "booking %d", s.Seq)
		}
	}
}

// awaitSent waits until the relay has sent n confirmations (it looks
// every stack.SendEvery), so that a run's message_sent observations are
// all in its own window.
func awaitSent(t *testing.T, e e2eEnv, n int) {
	testsupport.Eventually(t, 10*time.Minute, fmt.Sprintf("%d confirmations sent", n), func() bool {
		return countRows(t, e.pool, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND state <> 'pending'`) >= n
	})
}

// memReading is one reading of this process's memory: the resident set
// (VmRSS) of the load driver, the servers, the worker and the embedded
// Temporal server, as `make run` holds them in one process, split into
// anonymous and file-backed pages (SQLite's memory maps count there once
// touched); within the anonymous part, what the Go runtime holds (heap,
// stacks, its own structures, less what it returned to the system) and
// of that the heap's objects, live or not yet swept. What is anonymous
// and not Go's is mostly SQLite's page caches (the pure-Go SQLite
// allocates outside the Go heap).
type memReading struct {
	rss, anon, file int64 // kB
	goHeld, heap    int64 // kB
}

// readMem reads /proc/self/status and the Go heap.
func readMem() (memReading, error) {
	r, err := proc{}.rss()
	if err != nil {
		return memReading{}, err
	}
	m := memReading{rss: r.rss, anon: r.anon, file: r.file}
	sample := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(sample)
	m.heap = int64(sample[0].Value.Uint64() / 1024)
	m.goHeld = int64((sample[1].Value.Uint64() - sample[2].Value.Uint64()) / 1024)
	return m, nil
}

// mustReadMem is readMem in a test.
func mustReadMem(t *testing.T) memReading {
	m, err := readMem()
	require.NoError(t, err)
	return m
}

// whileSampling runs f and reads the memory every 250 ms meanwhile; it
// returns f's result and the reading with the largest resident set.
func whileSampling(t *testing.T, f func() Result) (Result, memReading) {
	var peak memReading
	r := sampling(t, f, func() error {
		m, err := readMem()
		if m.rss > peak.rss {
			peak = m
		}
		return err
	})
	return r, peak
}

// sampling runs f and calls read every 250 ms meanwhile, and once more
// after f.
func sampling(t *testing.T, f func() Result, read func() error) Result {
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			readErr = errors.Join(readErr, read())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	r := f()
	close(stop)
	wg.Wait()
	require.NoError(t, errors.Join(readErr, read()))
	return r
}
