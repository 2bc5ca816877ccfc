package bench

import (
	"fmt"
	"strings"

	"github.com/bookonce/bookonce/internal/telemetry"
)

const latencyTitle = "7. Latency: webhook → Confirmed at a steady 5 bookings/s"

// The latency targets, in milliseconds.
const (
	latencyP50Target = 250
	latencyP99Target = 1000
	latencyMaxTarget = 2000
)

const latencyIntro = `The booking of item 4 (a new customer's signed WhatsApp wish through the gateway to the appointment's
Confirmed result), but in an open loop: booking k starts at t0 + k × 200 ms whether or not the ones before have
finished, as customers do not wait for each other. The stack is wired as ` + "`make run`" + ` wires it: the production
worker (` + "`stack.Worker`" + `, its options), the gateway, the calendar and payment APIs, the outbox relay sending
through the fake Twilio every ` + "`stack.SendEvery`" + `, and an embedded Temporal server of its own as ` + "`make run`" + ` starts it:
state in a SQLite file (WAL, ` + "`TEMPORAL_DB_SYNC`" + `'s default), not the other items' in-memory server. A booking ends
at its appointment workflow's close time on the server; the waiter looks for the appointment with a backoff up to
500 ms and reads that time afterwards, so that the load generator's polling is not the load. "Start lag" is the
load generator's own largest delay behind its schedule. Only this item:
` + "`BOOKONCE_BENCH=1 BOOKONCE_BENCH_ONLY=latency go test -count=1 -run TestBenchFull -timeout 90m -v ./bench/`" + `
(replaces this section only; ` + "`BOOKONCE_BENCH_LATENCY_N`" + ` sets the bookings per run, default 2000).`

const phasesIntro = `Where the time goes, from ` + "`bookonce_booking_phase_seconds`" + ` (the same histogram production
exports on /metrics): each phase is the time from the webhook being accepted (the gateway's request start, carried
as the event's ReceivedAt into the conversation, the appointment's input and the outbox row) to the end of the
phase; "accepted" is the gateway's request until its inbox row committed. Quantiles are interpolated within the
histogram's buckets (as Prometheus's histogram_quantile does), so they are as coarse as the buckets around them;
the means are exact.`

// phaseEnds says in the report when each phase ends.
var phaseEnds = map[telemetry.Phase]string{
	telemetry.PhaseAccepted:           "inbox row committed (from the request's start)",
	telemetry.PhaseDelivered:          "the conversation's workflow task handling the signal began",
	telemetry.PhaseDedupDecided:       "dedup decision back in the conversation",
	telemetry.PhaseAppointmentStarted: "the appointment's first workflow task began",
	telemetry.PhaseHold:               "slot held",
	telemetry.PhaseAuthorisation:      "payment saga reported the deposit authorised",
	telemetry.PhaseConfirm:            "calendar confirmed the booking",
	telemetry.PhaseCapture:            "payment saga captured the deposit",
	telemetry.PhaseConfirmationQueued: "confirmation reserved in the outbox (Confirmed follows)",
	telemetry.PhaseMessageSent:        "relay handed the confirmation to Twilio",
}

func (r *report) latencyTables(b *strings.Builder) []target {
	l := r.latency
	b.WriteString(latencyIntro + "\n\n")
	b.WriteString("| run | bookings | not Confirmed within 2 min | p50 ms | p95 ms | p99 ms | max ms | start lag ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var p50, p95, p99, mx, lag []float64
	for i, run := range l.runs {
		fmt.Fprintf(b, "| %d | %d | %d | %.0f | %.0f | %.0f | %.0f | %.1f |\n", i+1, run.r.Ops, run.r.Errors,
			ms(run.r.P50()), ms(run.r.P95()), ms(run.r.P99()), ms(run.r.Max()), ms(run.lag))
		p50, p95, p99 = append(p50, ms(run.r.P50())), append(p95, ms(run.r.P95())), append(p99, ms(run.r.P99()))
		mx, lag = append(mx, ms(run.r.Max())), append(lag, ms(run.lag))
	}
	s50, s99, smx := SpreadOf(p50), SpreadOf(p99), SpreadOf(mx)
	fmt.Fprintf(b, "| median (min–max) | %d | | %s | %s | %s | %s | %s |\n\n", l.n, s50.Format("%.0f"), SpreadOf(p95).Format("%.0f"),
		s99.Format("%.0f"), smx.Format("%.0f"), SpreadOf(lag).Format("%.1f"))
	targets := []target{
		{"7. latency, p50", fmt.Sprintf("webhook → Confirmed p50 ≤ %d ms at 5/s", latencyP50Target), s50.Format("%.0f") + " ms (" + verdict(s50.Median <= latencyP50Target) + ")"},
		{"7. latency, p99", fmt.Sprintf("p99 ≤ %d ms", latencyP99Target), s99.Format("%.0f") + " ms (" + verdict(s99.Median <= latencyP99Target) + ")"},
		{"7. latency, slowest", fmt.Sprintf("no booking slower than %d ms over %d", latencyMaxTarget, l.n),
			fmt.Sprintf("%s ms (%s)", smx.Format("%.0f"), verdict(smx.Max <= latencyMaxTarget))},
	}
	b.WriteString("| target | result |\n|---|---|\n")
	for _, t := range targets {
		fmt.Fprintf(b, "| %s | %s |\n", t.goal, t.result)
	}
	b.WriteString("\n" + phasesIntro + "\n\n")
	r.phaseTable(b)
	fmt.Fprintf(b, "\nMemory (VmRSS of the benchmark's process, which holds the whole stack as `make run`'s process does, "+
		"plus the load generator: a proxy for `make run`'s RSS): idle after the stack started %s; "+
		"the largest reading while driving 20 bookings/s (%d bookings, read every 250 ms, after the %d bookings of the runs above) %s.\n",
		l.rssIdle, l.rssN, l.n*len(l.runs)+1, l.rssLoad)
	return targets
}

// String says a reading in MB: the resident set, its anonymous part with
// what the Go runtime holds of it, and its file-backed part.
func (m memReading) String() string {
	mb := func(kb int64) float64 { return float64(kb) / 1024 }
	return fmt.Sprintf("%.0f MB (anonymous %.0f MB, of which the Go runtime holds %.0f MB with %.0f MB of heap objects; file-backed %.0f MB)",
		mb(m.rss), mb(m.anon), mb(m.goHeld), mb(m.heap), mb(m.file))
}

// phaseTable prints each phase's time since the webhook was accepted,
// median over the runs with (min–max), and the mean's growth over the
// phase before: the phase's own share.
func (r *report) phaseTable(b *strings.Builder) {
	b.WriteString("| phase | ends when | p50 ms | p95 ms | p99 ms | mean ms | mean − previous phase's mean, ms |\n|---|---|---:|---:|---:|---:|---:|\n")
	prev := 0.0
	for _, p := range telemetry.Phases {
		stat := func(f func(hist) float64) Spread {
			var xs []float64
			for _, run := range r.latency.runs {
				xs = append(xs, f(run.phases[p]))
			}
			return SpreadOf(xs)
		}
		mean := stat(hist.meanMs)
		own := "–"
		if p != telemetry.PhaseAccepted {
			own = fmt.Sprintf("%.0f", mean.Median-prev)
			prev = mean.Median
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", p, phaseEnds[p],
			stat(func(h hist) float64 { return h.quantile(0.5) }).Format("%.0f"),
			stat(func(h hist) float64 { return h.quantile(0.95) }).Format("%.0f"),
			stat(func(h hist) float64 { return h.quantile(0.99) }).Format("%.0f"),
			mean.Format("%.0f"), own)
	}
}
