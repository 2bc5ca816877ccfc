package bench

import (
	"context"
	"sync"
	"time"
)

// OpenLoop drives op at a steady rate: the k-th of n ops starts at
// begin + k*every whether or not the ones before have finished, as
// customers do not wait for each other. A closed loop (Run) would slow
// its arrivals down exactly when the system is slow and hide the queue.
type OpenLoop struct {
	N     int
	Every time.Duration
	// SeqBase is added to every seq, as in Load.
	SeqBase int
}

// Run starts the ops on schedule and waits for all of them. Lag is the
// latest any op started after its scheduled moment (the driver's own
// delay: if it is large, the rate was not what the report says).
func (l OpenLoop) Run(ctx context.Context, op Op) (r Result, lag time.Duration) {
	samples := make([]Sample, l.N)
	var wg sync.WaitGroup
	begin := time.Now()
	tick := time.NewTimer(0)
	defer tick.Stop()
	started := 0
	for k := range l.N {
		tick.Reset(time.Until(begin.Add(time.Duration(k) * l.Every)))
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if ctx.Err() != nil {
			break
		}
		lag = max(lag, time.Since(begin.Add(time.Duration(k)*l.Every)))
		started++
		wg.Go(func() {
			t0 := time.Now()
			latency, err := timeOp(context.WithoutCancel(ctx), op, l.SeqBase+k)
			samples[k] = Sample{Seq: l.SeqBase + k, Start: t0.Sub(begin), Latency: latency, Err: err}
		})
	}
	wg.Wait()
	r = Result{Concurrency: 0, Elapsed: time.Since(begin), Samples: samples[:started]}
	r.tally()
	return r, lag
}
