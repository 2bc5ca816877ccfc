package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// After the deploy, the soak finds each backend's rate at saturation: a
// closed loop of soakSaturationConcurrency customers, each booking
// through the whole path as soon as its last booking is confirmed, for
// soakSaturationFor. Sixteen are well past what two cores serve (a
// booking takes a few hundred milliseconds unloaded), so the CPU, not
// the arrivals, sets the rate.
const (
	soakSaturationFor         = time.Minute
	soakSaturationConcurrency = 16
)

// soakSaturation is what the closed loop reached.
type soakSaturation struct {
	r Result
	// cpu is the CPU per booking of each process, then PostgreSQL's.
	cpu []time.Duration
	// actions is Temporal's actions per booking at the last level.
	actions float64
}

// String gives the rate, per core, the latency, the CPU per booking and
// the rate of Temporal actions it makes.
func (s soakSaturation) String() string {
	rate := s.r.OpsPerSec()
	var cpu []string
	for i, d := range s.cpu {
		name := "PostgreSQL"
		if i < len(soakProcNames) {
			name = soakProcNames[i]
		}
		cpu = append(cpu, fmt.Sprintf("%s %d", name, d.Milliseconds()))
	}
	return fmt.Sprintf("%.1f bookings/s (%.1f per core of %d), p50 %v, p99 %v, %d errors of %d; CPU ms/booking: %s; %.0f Temporal actions/s",
		rate, rate/float64(runtime.NumCPU()), runtime.NumCPU(), s.r.P50().Round(time.Millisecond), s.r.P99().Round(time.Millisecond),
		s.r.Errors, s.r.Ops, strings.Join(cpu, ", "), rate*s.actions)
}

// saturate runs the closed loop; its customers come after the load's.
func (s *soakRun) saturate(t *testing.T, actions float64) soakSaturation {
	c0 := procCPUs(t, s.procs)
	r := Run(context.Background(), Load{Concurrency: soakSaturationConcurrency, Duration: soakSaturationFor, SeqBase: s.loadSeq}, s.e.bookingOp(t))
	c1 := procCPUs(t, s.procs)
	s.loadSeq += r.Ops
	out := soakSaturation{r: r, actions: actions}
	for _, d := range c1.since(c0) {
		out.cpu = append(out.cpu, d/time.Duration(max(1, r.Ops)))
	}
	t.Logf("soak saturation: first error %v", r.FirstErr)
	return out
}
