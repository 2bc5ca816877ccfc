package bench

import (
	"fmt"
	"strings"
)

const ingestIntro = `Signed WhatsApp webhooks through the gateway (stack.Gateway: signature check,
inbox insert, SignalWithStart of the customer's conversation, inbox row marked delivered; measured from
the POST to the 200) against the same SignalWithStart calls made directly with the SDK client, on the
same in-process server. Every event is a new customer, so both sides start one conversation workflow
and signal it; no worker polls their task queue, so both sides only ingest.`

const e2eIntro = `A booking: a new customer's signed WhatsApp message ("Reifenwechsel am 4.12. um 15:30 Uhr")
goes through the gateway, the conversation workflow understands it, decides (dedup) and starts the
appointment saga, which holds the slot, authorises the deposit in the payment child workflow, confirms
the hold, captures and reserves the confirmation, against the real calendar and payment APIs,
PostgreSQL and the embedded Temporal server. The operation ends when the appointment's status is
Confirmed (its workflow result): its latency is **webhook to Confirmed**. The bare side starts the same
workflow shape with SignalWithStart (no HTTP, no inbox) with no-op activities and ends when the bare
appointment completes. Both wait for the result the same way.`

func (r *report) ingestTables(b *strings.Builder) []target {
	ratiosHead(b, ingestIntro, r.ingest.series, "| c | gateway / raw throughput | target ≥ 0.5 | new event / redelivery: p50 latency | new event / redelivery: CPU per op (Go + PG) | target ≥ 10× |",
		"|---:|---:|---|---:|---:|---|")
	var out []target
	for _, c := range concs(r.ingest.series) {
		gw, raw, rd := find(r.ingest.series, ingestGateway, c), find(r.ingest.series, ingestRaw, c), find(r.ingest.series, ingestRedelivery, c)
		if gw == nil || raw == nil || rd == nil {
			continue
		}
		tp := ratio(gw, raw, Result.OpsPerSec)
		lat := ratio(gw, rd, func(r Result) float64 { return ms(r.P50()) })
		cpu := cpuRatio(gw, rd)
		cheap := lat.Median >= redeliveryRatio && cpu.Median >= redeliveryRatio
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s |\n", c, tp.Format("%.2f"), verdict(tp.Median >= ingestTarget),
			lat.Format("%.1f"), cpu.Format("%.1f"), verdict(cheap))
		out = append(out,
			target{fmt.Sprintf("3. webhook ingest, c=%d", c), "gateway ≥ 0.5 × raw SignalWithStart", tp.Format("%.2f") + " (" + verdict(tp.Median >= ingestTarget) + ")"},
			target{fmt.Sprintf("3. redelivery, c=%d", c), "≥ 10× cheaper than a new event (latency and CPU)",
				fmt.Sprintf("latency %s×, CPU %s× (%s)", lat.Format("%.1f"), cpu.Format("%.1f"), verdict(cheap))})
	}
	return out
}

func (r *report) e2eTables(b *strings.Builder) []target {
	ratiosHead(b, e2eIntro, r.e2e.series, "| c | bookings/s ÷ bare/s | target ≥ 0.7 | webhook → Confirmed p50 ms | p95 ms | bare p50 ms | bare p95 ms |",
		"|---:|---:|---|---:|---:|---:|---:|")
	var out []target
	for _, c := range concs(r.e2e.series) {
		sg, bw := find(r.e2e.series, e2eSaga, c), find(r.e2e.series, e2eBare, c)
		if sg == nil || bw == nil {
			continue
		}
		rs := ratio(sg, bw, Result.OpsPerSec)
		p := func(s *series, q float64) string {
			return s.spread(func(r Result) float64 { return ms(Percentile(r.Latencies, q)) }).Format("%.0f")
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s |\n", c, rs.Format("%.2f"), verdict(rs.Median >= e2eTarget),
			p(sg, 0.5), p(sg, 0.95), p(bw, 0.5), p(bw, 0.95))
		out = append(out, target{fmt.Sprintf("4. end to end, c=%d", c), "bookings/s ≥ 0.7 × bare workflows/s",
			rs.Format("%.2f") + " (" + verdict(rs.Median >= e2eTarget) + "); webhook → Confirmed p50 " + p(sg, 0.5) + " ms, p95 " + p(sg, 0.95) + " ms"})
	}
	b.WriteString("\nWhat one booking makes the engine do, counted from the histories of the first booking and the first bare run " +
		"(the benchmark fails if the activity or child counts differ):\n\n")
	b.WriteString("| workflow | booking | bare |\n|---|---|---|\n")
	real, bare := r.e2e.shapes["booking"], r.e2e.shapes["bare"]
	fmt.Fprintf(b, "| conversation | %s | %s |\n", real.Conversation, bare.Conversation)
	fmt.Fprintf(b, "| appointment | %s | %s |\n", real.Appointment, bare.Appointment)
	return out
}

// ratiosHead writes the intro, the latency table of ss and the head of
// the ratio table that follows it.
func ratiosHead(b *strings.Builder, intro string, ss []*series, head, align string) {
	b.WriteString(strings.Join(strings.Fields(intro), " ") + "\n\n")
	latencyTable(b, ss)
	b.WriteString("\n" + head + "\n" + align + "\n")
}
