// Package bench measures what exactly-once costs, side by side: the
// idempotency middleware against the same handler without it, the claim
// path against the raw database floor, webhook ingest against raw
// SignalWithStart, whole bookings against bare workflows of the same
// shape, and claims as the key table grows and while the reaper deletes
// expired keys. The measurements live in the _test.go files
// (TestBenchSmoke in `make test`, TestBenchFull with BOOKONCE_BENCH=1,
// which writes docs/benchmarks.md); this file is the small load driver
// they share.
package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one unit of load. seq is unique across all workers of a run (0, 1,
// 2, ...), so an op can derive a distinct key, slot or reference from it.
type Op func(ctx context.Context, seq int) error

// endMark is where an op can leave the moment its operation really ended.
type endMark struct{ at time.Time }

type endMarkKey struct{}

// MarkEnd tells the driver when the op's operation ended, for an op that
// learns it later than it happened (a waiter that looks now and then
// reads the server's close time afterwards); without it the op's own
// return is the end.
func MarkEnd(ctx context.Context, at time.Time) {
	if m, ok := ctx.Value(endMarkKey{}).(*endMark); ok {
		m.at = at
	}
}

// timeOp runs op and returns its latency: until MarkEnd's moment when the
// op left one, else until it returned.
func timeOp(ctx context.Context, op Op, seq int) (time.Duration, error) {
	m := &endMark{}
	t0 := time.Now()
	err := op(context.WithValue(ctx, endMarkKey{}, m), seq)
	if m.at.IsZero() {
		return time.Since(t0), err
	}
	return m.at.Sub(t0), err
}

// Load says how much load to drive: Concurrency workers run until Ops ops
// have started (Ops > 0), or for Duration, or until the context ends.
type Load struct {
	Concurrency int
	Ops         int
	Duration    time.Duration
	// SeqBase is added to every seq, so that successive runs on one
	// database never reuse a key or slot.
	SeqBase int
}

// Sample is one op: its seq, when it started (since the run began) and
// how long it took.
type Sample struct {
	Seq            int
	Start, Latency time.Duration
	Err            error
}

// Result is one run's measurements.
type Result struct {
	Concurrency int
	Ops, Errors int
	FirstErr    error
	Elapsed     time.Duration
	// Samples are in completion order per worker, merged; Latencies sorted.
	Samples   []Sample
	Latencies []time.Duration
}

// Run drives op under load and records every op's latency. Failed ops are
// counted and their latency is kept too (a timeout is a slow op, not a
// missing one).
func Run(ctx context.Context, l Load, op Op) Result {
	if l.Concurrency < 1 {
		l.Concurrency = 1
	}
	if l.Ops <= 0 && l.Duration <= 0 {
		l.Duration = time.Second
	}
	if l.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.Duration)
		defer cancel()
	}
	var next atomic.Int64
	per := make([][]Sample, l.Concurrency)
	var wg sync.WaitGroup
	begin := time.Now()
	for w := range l.Concurrency {
		wg.Go(func() {
			out := make([]Sample, 0, 1024)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if l.Ops > 0 && i >= l.Ops {
					break
				}
				t0 := time.Now()
				// The op gets a context without the run's deadline: an op
				// in flight when the duration ends finishes and counts.
				latency, err := timeOp(context.WithoutCancel(ctx), op, l.SeqBase+i)
				out = append(out, Sample{Seq: l.SeqBase + i, Start: t0.Sub(begin), Latency: latency, Err: err})
			}
			per[w] = out
		})
	}
	wg.Wait()
	r := Result{Concurrency: l.Concurrency, Elapsed: time.Since(begin)}
	for _, s := range per {
		r.Samples = append(r.Samples, s...)
	}
	r.tally()
	return r
}

// tally derives the counts and sorted latencies from the samples.
func (r *Result) tally() {
	r.Ops, r.Errors, r.FirstErr = len(r.Samples), 0, nil
	r.Latencies = make([]time.Duration, 0, r.Ops)
	for _, s := range r.Samples {
		r.Latencies = append(r.Latencies, s.Latency)
		if s.Err != nil {
			r.Errors++
			if r.FirstErr == nil {
				r.FirstErr = s.Err
			}
		}
	}
	slices.Sort(r.Latencies)
}

// Percentile returns the q-quantile (0..1) of sorted latencies by the
// nearest-rank method; 0 when there are none.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// P50, P95, P99 and Max are the run's latency percentiles.
func (r Result) P50() time.Duration { return Percentile(r.Latencies, 0.50) }
func (r Result) P95() time.Duration { return Percentile(r.Latencies, 0.95) }
func (r Result) P99() time.Duration { return Percentile(r.Latencies, 0.99) }
func (r Result) Max() time.Duration { return Percentile(r.Latencies, 1) }

// OpsPerSec is successful ops per second of wall time.
func (r Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops-r.Errors) / r.Elapsed.Seconds()
}

// Split divides the run by the parity of each op's seq: the two halves
// of a load that alternates two variants op by op. Elapsed is shared.
func (r Result) Split() (even, odd Result) {
	for _, s := range r.Samples {
		half := &even
		if s.Seq%2 != 0 {
			half = &odd
		}
		half.Samples = append(half.Samples, s)
	}
	for _, h := range []*Result{&even, &odd} {
		h.Concurrency, h.Elapsed = r.Concurrency, r.Elapsed
		h.tally()
	}
	return even, odd
}

// Window returns the sorted latencies of the ops that were running at any
// moment of [from, to) (offsets since the run began).
func (r Result) Window(from, to time.Duration) []time.Duration {
	var out []time.Duration
	for _, s := range r.Samples {
		if s.Start < to && s.Start+s.Latency >= from {
			out = append(out, s.Latency)
		}
	}
	slices.Sort(out)
	return out
}

func (r Result) String() string {
	return fmt.Sprintf("c=%d ops=%d errors=%d %.0f ops/s p50=%v p95=%v p99=%v max=%v",
		r.Concurrency, r.Ops, r.Errors, r.OpsPerSec(), r.P50(), r.P95(), r.P99(), r.Max())
}

// Spread is the median of repeated measurements of one number with its
// minimum and maximum.
type Spread struct{ Median, Min, Max float64 }

// SpreadOf summarises repeated measurements; the median of an even count
// is the mean of the middle two.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// Format prints the spread with format f for each number, e.g. "%.2f".
func (s Spread) Format(f string) string {
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
