package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// hist is one phase's bookonce_booking_phase_seconds, summed over tenants:
// cumulative counts per upper bound (seconds).
type hist struct {
	bounds []float64
	cum    []uint64
	count  uint64
	sum    float64
}

type phaseHists map[telemetry.Phase]hist

// gatherPhases reads bookonce_booking_phase_seconds from the registries
// (the gateway's and the worker's).
func gatherPhases(t *testing.T, gs ...prometheus.Gatherer) phaseHists {
	out := phaseHists{}
	for _, g := range gs {
		mfs, err := g.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != telemetry.BookingPhaseName {
				continue
			}
			for _, m := range mf.GetMetric() {
				out.add(phaseOf(m), m.GetHistogram())
			}
		}
	}
	return out
}

func phaseOf(m *dto.Metric) telemetry.Phase {
	for _, l := range m.GetLabel() {
		if l.GetName() == "phase" {
			return telemetry.Phase(l.GetValue())
		}
	}
	return ""
}

func (ph phaseHists) add(p telemetry.Phase, h *dto.Histogram) {
	cur := ph[p]
	if cur.bounds == nil {
		for _, b := range h.GetBucket() {
			cur.bounds = append(cur.bounds, b.GetUpperBound())
		}
		cur.cum = make([]uint64, len(cur.bounds))
	}
	for i, b := range h.GetBucket() {
		cur.cum[i] += b.GetCumulativeCount()
	}
	cur.count += h.GetSampleCount()
	cur.sum += h.GetSampleSum()
	ph[p] = cur
}

// minus is what was observed since before.
func (ph phaseHists) minus(before phaseHists) phaseHists {
	out := phaseHists{}
	for p, h := range ph {
		b := before[p]
		d := hist{bounds: h.bounds, cum: make([]uint64, len(h.cum)), count: h.count - b.count, sum: h.sum - b.sum}
		for i := range h.cum {
			d.cum[i] = h.cum[i]
			if i < len(b.cum) {
				d.cum[i] -= b.cum[i]
			}
		}
		out[p] = d
	}
	return out
}

// quantile estimates the q-quantile in milliseconds by linear
// interpolation within the bucket that holds it (as Prometheus's
// histogram_quantile does); beyond the last bound it returns that bound.
func (h hist) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * float64(h.count)
	lo, below := 0.0, uint64(0)
	for i, c := range h.cum {
		if float64(c) >= rank {
			if c == below {
				return h.bounds[i] * 1000
			}
			return (lo + (h.bounds[i]-lo)*(rank-float64(below))/float64(c-below)) * 1000
		}
		lo, below = h.bounds[i], c
	}
	return lo * 1000
}

// means lists each phase's mean in milliseconds, for the log.
func (ph phaseHists) means() string {
	var b strings.Builder
	for _, p := range telemetry.Phases {
		fmt.Fprintf(&b, " %s=%.0f", p, ph[p].meanMs())
	}
	return b.String()
}

// meanMs is the mean observation in milliseconds.
func (h hist) meanMs() float64 {
	if h.count == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.count) * 1000
}

func TestHistQuantileInterpolatesWithinTheBucket(t *testing.T) {
	h := hist{bounds: []float64{0.1, 0.2, 0.5}, cum: []uint64{0, 10, 20}, count: 20, sum: 4}
	for _, tc := range []struct {
		q, want float64
	}{
		{0.25, 150}, {0.5, 200}, {0.75, 350}, {1, 500},
	} {
		require.InDelta(t, tc.want, h.quantile(tc.q), 1e-9, "q=%v", tc.q)
	}
	require.InDelta(t, 200, h.meanMs(), 1e-9)
}
