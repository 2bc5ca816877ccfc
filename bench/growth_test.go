package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
)

// ---- item 5: growth and the reaper --------------------------------------

type growthResult struct {
	sizes  []int
	series []*series
}

func measureGrowth(t *testing.T, sz sizes) growthResult {
	e := newEnv(t)
	h := noopHandler(idempotency.NewStore(e.pool, idempotency.Options{}))
	res := growthResult{sizes: sz.growth}
	have, seq := 0, 0
	for _, n := range sz.growth {
		preloadKeys(t, e.pool, noopOp, have, n-have, false)
		have = n
		s := &series{variant: fmt.Sprintf("%d live keys", n), conc: 1}
		for range sz.reps {
			r := measured(context.Background(), s, Load{Concurrency: 1, Ops: sz.growthN, SeqBase: seq}, inProcessOp(h, "g-"))
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
	store := idempotency.NewStore(e.pool, idempotency.Options{})
	h := noopHandler(store)
	res := reaperResult{n: sz.reapN}
	seq := 0
	const lead = 500 * time.Millisecond
	for rep := range sz.reapReps {
		preloadKeys(t, e.pool, "POST /bench/expired", rep*sz.reapN, sz.reapN, true)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Result)
		go func() {
			done <- Run(ctx, Load{Concurrency: 4, Duration: 30 * time.Minute, SeqBase: seq}, inProcessOp(h, "r-"))
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
