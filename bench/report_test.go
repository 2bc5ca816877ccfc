package bench

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

type report struct {
	started time.Time
	elapsed time.Duration
	full    bool
	holds   holdsResult
	claim   claimResult
	ingest  ingestResult
	e2e     e2eResult
	growth  growthResult
	reaper  reaperResult
	voice   voiceResult
	redis   redisResult
	latency latencyResult
	syncLag syncLagResult
	pushLag syncLagResult
	tools   toolsResult
}

// The targets.
const (
	holdsTargetMs   = 1.0 // added p95 at c=1
	claimTarget     = 0.8 // store / raw pgx throughput
	ingestTarget    = 0.5 // gateway / raw SignalWithStart throughput
	redeliveryRatio = 10  // a new event costs at least this many redeliveries
	e2eTarget       = 0.7 // bookings / bare workflows throughput
)

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func latencyTable(b *strings.Builder, ss []*series) {
	b.WriteString("| variant | c | ops/s | p50 ms | p95 ms | p99 ms | Go CPU µs/op | PG CPU µs/op |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range ss {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %.0f | %.0f |\n", s.variant, s.conc,
			s.spread(Result.OpsPerSec).Format("%.1f"),
			s.spread(func(r Result) float64 { return ms(r.P50()) }).Format("%.2f"),
			s.spread(func(r Result) float64 { return ms(r.P95()) }).Format("%.2f"),
			s.spread(func(r Result) float64 { return ms(r.P99()) }).Format("%.2f"),
			durSpread(s.cpuGo).Median*1000, durSpread(s.cpuPG).Median*1000)
	}
}

// ratio pairs run k of a with run k of b (they ran back to back).
func ratio(a, b *series, f func(Result) float64) Spread {
	var xs []float64
	for k := range min(len(a.runs), len(b.runs)) {
		if d := f(b.runs[k]); d != 0 {
			xs = append(xs, f(a.runs[k])/d)
		}
	}
	return SpreadOf(xs)
}

func diff(a, b *series, f func(Result) time.Duration) Spread {
	var xs []float64
	for k := range min(len(a.runs), len(b.runs)) {
		xs = append(xs, ms(f(a.runs[k])-f(b.runs[k])))
	}
	return SpreadOf(xs)
}

// cpuRatio pairs the CPU per op (Go + PostgreSQL) of run k of a and b.
func cpuRatio(a, b *series) Spread {
	var xs []float64
	for k := range min(len(a.cpuGo), len(b.cpuGo)) {
		if d := b.cpuGo[k] + b.cpuPG[k]; d > 0 {
			xs = append(xs, float64(a.cpuGo[k]+a.cpuPG[k])/float64(d))
		}
	}
	return SpreadOf(xs)
}

func find(ss []*series, prefix string, c int) *series {
	for _, s := range ss {
		if strings.HasPrefix(s.variant, prefix) && s.conc == c {
			return s
		}
	}
	return nil
}

func concs(ss []*series) []int {
	var out []int
	for _, s := range ss {
		if !slices.Contains(out, s.conc) {
			out = append(out, s.conc)
		}
	}
	return out
}

// target is one row of the summary.
type target struct{ item, goal, result string }

func (r *report) holdsTables(b *strings.Builder) []target {
	b.WriteString("POST /v1/holds of the calendar API as `internal/stack` serves it, behind the middleware and, without it, " +
		"in a plain transaction (`Options.PlainTransaction`: BEGIN, the handler, COMMIT; no key). Every op books a slot of its own.\n\n")
	latencyTable(b, r.holds.series)
	b.WriteString("\n| c | throughput with / without | added p50 ms | added p95 ms | added p99 ms |\n|---:|---:|---:|---:|---:|\n")
	var out []target
	for _, c := range concs(r.holds.series) {
		w, wo := find(r.holds.series, "with middleware", c), find(r.holds.series, "without", c)
		if w == nil || wo == nil {
			continue
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", c, ratio(w, wo, Result.OpsPerSec).Format("%.2f"),
			diff(w, wo, Result.P50).Format("%.2f"), diff(w, wo, Result.P95).Format("%.2f"), diff(w, wo, Result.P99).Format("%.2f"))
	}
	if len(r.holds.paired) == 2 {
		wo, w := r.holds.paired[0], r.holds.paired[1]
		b.WriteString("\nThe same at c=1, alternating op by op (even ops without, odd ops with the middleware, in one run), " +
			"so that both halves meet the same moments of the machine; the target is read here:\n\n")
		b.WriteString("| variant | ops | p50 ms | p95 ms | p99 ms |\n|---|---:|---:|---:|---:|\n")
		for _, s := range r.holds.paired {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", s.variant, s.runs[0].Ops,
				s.spread(func(r Result) float64 { return ms(r.P50()) }).Format("%.2f"),
				s.spread(func(r Result) float64 { return ms(r.P95()) }).Format("%.2f"),
				s.spread(func(r Result) float64 { return ms(r.P99()) }).Format("%.2f"))
		}
		p95 := diff(w, wo, Result.P95)
		fmt.Fprintf(b, "| **added by the middleware** | | %s | %s | %s |\n", diff(w, wo, Result.P50).Format("%.2f"), p95.Format("%.2f"), diff(w, wo, Result.P99).Format("%.2f"))
		out = append(out, target{"1. idempotency layer, c=1", fmt.Sprintf("added p95 < %.0f ms", holdsTargetMs),
			p95.Format("%.2f") + " ms (" + verdict(p95.Median < holdsTargetMs) + ")"})
	}
	return out
}

func (r *report) claimTables(b *strings.Builder) []target {
	latencyTable(b, r.claim.series)
	b.WriteString("\n| c | store / raw pgx floor | target ≥ 0.8 | store / raw pgx with the store's asynchronous claim commit | " +
		"raw in the store's shape / raw asynchronous | store / raw in the store's shape | CPU per op (Go + PG): floor / store | store behind HTTP / store in-process |\n" +
		"|---:|---:|---|---:|---:|---:|---:|---:|\n")
	var out []target
	for _, c := range concs(r.claim.series) {
		st, fl := find(r.claim.series, claimStore, c), find(r.claim.series, claimFloor, c)
		fa, hs := find(r.claim.series, claimFloorAsync, c), find(r.claim.series, claimHTTP, c)
		sh := find(r.claim.series, claimShape, c)
		if st == nil || fl == nil || fa == nil || hs == nil || sh == nil {
			continue
		}
		rs := ratio(st, fl, Result.OpsPerSec)
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", c, rs.Format("%.2f"), verdict(rs.Median >= claimTarget),
			ratio(st, fa, Result.OpsPerSec).Format("%.2f"), ratio(sh, fa, Result.OpsPerSec).Format("%.2f"),
			ratio(st, sh, Result.OpsPerSec).Format("%.2f"), cpuRatio(fl, st).Format("%.2f"), ratio(hs, st, Result.OpsPerSec).Format("%.2f"))
		out = append(out, target{fmt.Sprintf("2. claim path, c=%d", c), "throughput ≥ 0.8 × raw pgx", rs.Format("%.2f") + " (" + verdict(rs.Median >= claimTarget) + ")"})
	}
	return out
}

func (r *report) growthTables(b *strings.Builder) []target {
	b.WriteString("| live keys | claim+complete p50 ms | p95 ms | p99 ms | ops/s (c=1) |\n|---:|---:|---:|---:|---:|\n")
	for i, s := range r.growth.series {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", r.growth.sizes[i],
			s.spread(func(r Result) float64 { return ms(r.P50()) }).Format("%.2f"),
			s.spread(func(r Result) float64 { return ms(r.P95()) }).Format("%.2f"),
			s.spread(func(r Result) float64 { return ms(r.P99()) }).Format("%.2f"),
			s.spread(Result.OpsPerSec).Format("%.0f"))
	}
	var out []target
	if n := len(r.growth.series); n >= 2 {
		a, z := r.growth.series[0], r.growth.series[n-1]
		rs := ratio(z, a, func(r Result) float64 { return ms(r.P95()) })
		fmt.Fprintf(b, "\np95 at %d keys / p95 at %d keys: %s\n", r.growth.sizes[n-1], r.growth.sizes[0], rs.Format("%.2f"))
		out = append(out, target{"5. growth", fmt.Sprintf("claim p95 flat from %d to %d live keys", r.growth.sizes[0], r.growth.sizes[n-1]),
			"p95 ratio " + rs.Format("%.2f")})
	}
	fmt.Fprintf(b, "\nReaper deleting %d expired keys (batches of 500, as RunReaper) while 4 clients claim new keys:\n\n", r.reaper.n)
	b.WriteString("| run | total reap s | keys/s | claims during reap | longest claim during reap ms | p99 during ms | longest claim before ms |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	var tot, maxd, maxb []float64
	for i, run := range r.reaper.runs {
		fmt.Fprintf(b, "| %d | %.2f | %.0f | %d | %.2f | %.2f | %.2f |\n", i+1, run.total.Seconds(),
			float64(run.deleted)/run.total.Seconds(), run.claimsDured, ms(run.maxDuring), ms(run.p99During), ms(run.maxBefore))
		tot = append(tot, run.total.Seconds())
		maxd = append(maxd, ms(run.maxDuring))
		maxb = append(maxb, ms(run.maxBefore))
	}
	fmt.Fprintf(b, "| median (min–max) | %s | | | %s | | %s |\n", SpreadOf(tot).Format("%.2f"), SpreadOf(maxd).Format("%.2f"), SpreadOf(maxb).Format("%.2f"))
	out = append(out, target{"5. reaper", fmt.Sprintf("delete %d expired keys; longest claim meanwhile", r.reaper.n),
		fmt.Sprintf("%s s; longest claim %s ms (before: %s ms)", SpreadOf(tot).Format("%.1f"), SpreadOf(maxd).Format("%.1f"), SpreadOf(maxb).Format("%.1f"))})
	return out
}

// tables renders the results of every item measured, and the targets.
func (r *report) tables() (string, []target) {
	var b strings.Builder
	var ts []target
	section := func(title string, have bool, f func(*strings.Builder) []target) {
		if have {
			b.WriteString("\n## " + title + "\n\n")
			ts = append(ts, f(&b)...)
		}
	}
	section("1. Idempotency layer: POST /v1/holds with and without the middleware", r.holds.series != nil, r.holdsTables)
	section("2. Claim path vs. the database floor", r.claim.series != nil, r.claimTables)
	section("3. Webhook ingest", r.ingest.series != nil, r.ingestTables)
	section("4. End to end: bookings through the whole stack vs. bare workflows", r.e2e.series != nil, r.e2eTables)
	section("5. Growth and the reaper", r.growth.series != nil || r.reaper.runs != nil, r.growthTables)
	section("Voice: the gateway's TwiML answer to a spoken sentence", r.voice.series != nil, r.voiceTables)
	section("6. A Redis front cache for hot keys (seed 003)", r.redis.series != nil, r.redisTables)
	section(latencyTitle, r.latency.runs != nil, r.latencyTables)
	section("8. Shop calendars: how late a staff entry blocks the slot", r.syncLag.lags != nil, r.syncLagTables)
	section(toolsTitle, r.tools.book != nil, r.toolsTables)
	return b.String(), ts
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString("# Benchmarks: the cost of exactly-once, measured side by side\n\n")
	b.WriteString("Generated by `make bench` (`TestBenchFull` in `bench/`); do not edit by hand, rerun instead:\n\n")
	b.WriteString("```\nBOOKONCE_BENCH=1 go test -count=1 -run TestBenchFull -timeout 90m -v ./bench/\n```\n\n")
	b.WriteString("While working on one item: `BOOKONCE_BENCH_ONLY=holds,claim,ingest,e2e,growth,reaper,voice,redis,latency,synclag,tools` (any subset; " +
		"such a run replaces only its items' sections of this file), `BOOKONCE_BENCH_KEYS=100000` (the largest key count, default 1000000) " +
		"and `BOOKONCE_BENCH_LATENCY_N=300` (bookings per latency run, default 2000).\n\n")
	fmt.Fprintf(&b, "- Date: %s; the run took %s.\n", r.started.UTC().Format("2006-01-02 15:04 MST"), r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- Machine: %d CPUs (nproc), %s, GOMAXPROCS %d, shared with other engineers' builds.\n", runtime.NumCPU(), cpuModel(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "- Go %s %s/%s; PostgreSQL on 127.0.0.1:5432 on the same machine, a fresh database per item; "+
		"the Temporal server (embedded, in-memory SQLite) runs in the benchmark's process.\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	b.WriteString(method)
	tables, ts := r.tables()
	b.WriteString("\n## Targets\n\n| item | target | result (median, min–max) |\n|---|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.item, t.goal, t.result)
	}
	b.WriteString(tables)
	b.WriteString("\n## Where the time goes\n\n")
	b.WriteString(whereTimeGoes)
	b.WriteString("\n## CPU profiles\n\nEach profile is one extra run of the variant (not one of the measured runs), of the whole process: " +
		"load driver, servers, workers and the embedded Temporal server. PostgreSQL's share is not in it (see the PG CPU columns).\n")
	for _, m := range []map[string]string{r.holds.profile, r.claim.profile, r.ingest.profile, r.e2e.profile} {
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n%s\n</details>\n", name, m[name])
		}
	}
	return b.String()
}

const method = `- Method: every variant runs in the same process against the same servers; variants are interleaved
  (run k of one variant, then run k of the other) and each ratio pairs run k with run k, so machine noise
  and table growth hit both sides alike. A cell is the median of 3 runs with (min–max). Items 1-3 run 3 s
  per run, item 4 10 s per run, growth 1000 claims per size; the reaper runs twice. Latency is per operation
  as the client sees it. Keys for item 5 are bulk-loaded with INSERT ... SELECT generate_series, not through the API.
  "Go CPU" is this process's CPU per successful operation (load driver, servers, workers and, for items 3
  and 4, the embedded Temporal server), "PG CPU" the summed CPU of all postgres processes per operation.
  Absolute numbers on two shared cores are noisy; the ratios are the result.
`
