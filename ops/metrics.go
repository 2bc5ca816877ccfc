package ops

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/bookonce/bookonce/shopcal"
)

// Metric names the page reads.
const (
	MetricDuplicatesBlocked = "bookonce_duplicates_blocked_total"
	MetricDedupDecisions    = "bookonce_dedup_decisions_total"
	MetricReconcilerRepairs = "bookonce_reconciler_repairs_total"
	// MetricRegistry names the registry a /metrics exposition comes from
	// (label "registry", random per registry), so that the page counts
	// each registry once: with replicas, OPS_SCRAPE_URLS lists every
	// replica, its own gateway's admin listener included.
	MetricRegistry = "bookonce_registry_info"
)

// RegistryCollector returns the gauge that names a registry (MetricRegistry,
// value 1); every service registry carries one.
func RegistryCollector() prometheus.Collector {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricRegistry,
		Help:        "Names this metrics registry, so that a page summing several scrapes counts each registry once.",
		ConstLabels: prometheus.Labels{"registry": hex.EncodeToString(b)}})
	g.Set(1)
	return g
}

// registryOf returns the registry name a gather carries ("" when none:
// such a gather is always counted).
func registryOf(mfs []*dto.MetricFamily) string {
	for _, mf := range mfs {
		if mf.GetName() == MetricRegistry {
			for _, m := range mf.GetMetric() {
				return label(m, "registry")
			}
		}
	}
	return ""
}

// HistoryMinutes is how far back the in-memory history goes (one sample a
// minute; a restart starts it again, Prometheus keeps the real history).
const HistoryMinutes = 60

// sample is the counters at one moment, keyed "dup\x00tenant\x00layer" and
// "dedup\x00decision\x00pair".
type sample struct {
	at     time.Time
	values map[string]float64
}

type history struct {
	mu      sync.Mutex
	size    int
	samples []sample // oldest first, one per minute
}

func newHistory(minutes int) *history { return &history{size: minutes + 1} }

// add records s in the bucket of its minute (a later sample in the same
// minute replaces the earlier) and forgets buckets older than the window.
func (h *history) add(s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.at = s.at.Truncate(time.Minute)
	if n := len(h.samples); n > 0 && !h.samples[n-1].at.Before(s.at) {
		if h.samples[n-1].at.Equal(s.at) {
			h.samples[n-1] = s
		}
		return
	}
	h.samples = append(h.samples, s)
	cutoff := s.at.Add(-time.Duration(h.size-1) * time.Minute)
	for len(h.samples) > 0 && (h.samples[0].at.Before(cutoff) || len(h.samples) > h.size) {
		h.samples = h.samples[1:]
	}
}

func (h *history) snapshot() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sample(nil), h.samples...)
}

func key(parts ...string) string { return strings.Join(parts, "\x00") }

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// gather sums the counters over all gatherers (each process registry holds
// its own layers; a counter present in two registries is added). A
// registry met twice (the page's own, scraped again through a replica
// list, or a replica listed twice) counts once.
func (p *Page) gather() (map[string]float64, []error) {
	values := map[string]float64{}
	var errs []error
	seen := map[string]bool{}
	for _, g := range p.targets(&errs) {
		mfs, err := g.Gather()
		if err != nil {
			errs = append(errs, err) // partial results are still useful
		}
		if id := registryOf(mfs); id != "" {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case MetricDuplicatesBlocked:
				for _, m := range mf.GetMetric() {
					values[key("dup", label(m, "tenant"), label(m, "layer"))] += m.GetCounter().GetValue()
				}
			case MetricDedupDecisions:
				for _, m := range mf.GetMetric() {
					values[key("dedup", label(m, "decision"), label(m, "channel_pair"))] += m.GetCounter().GetValue()
				}
			case MetricReconcilerRepairs:
				for _, m := range mf.GetMetric() {
					values[key("rec", label(m, "kind"))] += m.GetCounter().GetValue()
				}
			case shopcal.MetricLastSync, shopcal.MetricFailing, shopcal.MetricPush:
				gatherCalendars(values, mf)
			}
		}
	}
	return values, errs
}

// expander is a scrape target standing for several replicas
// (telemetry.Replicas): each is gathered on its own, so that each
// replica's registry is told apart and counted once.
type expander interface {
	Expand() ([]prometheus.Gatherer, error)
}

// targets lists the gatherers to read, replica sets expanded; a set that
// cannot be resolved is an error on the page, not a silent zero.
func (p *Page) targets(errs *[]error) []prometheus.Gatherer {
	var out []prometheus.Gatherer
	for _, g := range p.Gatherers {
		if g == nil {
			continue
		}
		if e, ok := g.(expander); ok {
			gs, err := e.Expand()
			if err != nil {
				*errs = append(*errs, err)
			}
			out = append(out, gs...)
			continue
		}
		out = append(out, g)
	}
	return out
}

func (p *Page) sample() (map[string]float64, []error) {
	values, errs := p.gather()
	p.history.add(sample{at: p.now(), values: values})
	return values, errs
}

type counterRow struct {
	Name      string // layer, or "decision · pair"
	Total     float64
	Window    float64 // increase over the history window
	Sparkline template.HTML
	Points    string // per-minute increases, for the title and tests
}

type counterView struct {
	Layers  []counterRow
	Dedup   []counterRow
	Repairs []counterRow // the reconciler's repairs by kind (all tenants)
	// Calendars are the tenant's resources with a calendar of the shop's
	// the workers mirror.
	Calendars []calendarRow
	Minutes   int // minutes the history spans
	Samples   int
	Errors    []string
	Since     time.Time
	Interval  string
}

// counters samples now and renders the tenant's duplicate counters per
// layer (all tenants' rows of a layer without a tenant label count too)
// and the dedup decisions (no tenant label: process-wide).
func (p *Page) counters(tenant string) counterView {
	values, errs := p.sample()
	samples := p.history.snapshot()
	var v counterView
	for _, err := range errs {
		v.Errors = append(v.Errors, err.Error())
	}
	v.Samples = len(samples)
	if len(samples) > 0 {
		v.Since = samples[0].at
		v.Minutes = int(samples[len(samples)-1].at.Sub(samples[0].at) / time.Minute)
	}
	// Select this tenant's series, summed by layer; dedup decisions and
	// repairs have no tenant label (process-wide).
	project := func(vals map[string]float64) [3]map[string]float64 {
		out := [3]map[string]float64{{}, {}, {}}
		for k, x := range vals {
			parts := strings.Split(k, "\x00")
			switch {
			case parts[0] == "dup" && (parts[1] == tenant || parts[1] == ""):
				out[0][parts[2]] += x
			case parts[0] == "dedup":
				out[1][parts[1]+" · "+parts[2]] += x
			case parts[0] == "rec":
				out[2][parts[1]] += x
			}
		}
		return out
	}
	cur := project(values)
	series := make([][3]map[string]float64, len(samples))
	for i, s := range samples {
		series[i] = project(s.values)
	}
	build := func(cur map[string]float64, idx int) []counterRow {
		names := make([]string, 0, len(cur))
		for n := range cur {
			names = append(names, n)
		}
		sort.Strings(names)
		rows := make([]counterRow, 0, len(names))
		for _, n := range names {
			pts := increases(series, idx, n)
			var window float64
			for _, x := range pts {
				window += x
			}
			strs := make([]string, len(pts))
			for i, x := range pts {
				strs[i] = fmt.Sprint(x)
			}
			rows = append(rows, counterRow{Name: n, Total: cur[n], Window: window, Sparkline: sparkline(pts), Points: strings.Join(strs, " ")})
		}
		return rows
	}
	v.Layers = build(cur[0], 0)
	v.Dedup = build(cur[1], 1)
	v.Repairs = build(cur[2], 2)
	v.Calendars = calendars(values, tenant, p.now())
	return v
}

// increases are the per-minute increases of series name between
// consecutive samples; a counter reset (restart) counts its new value.
func increases(series [][3]map[string]float64, idx int, name string) []float64 {
	var out []float64
	for i := 1; i < len(series); i++ {
		prev, cur := series[i-1][idx][name], series[i][idx][name]
		d := cur - prev
		if d < 0 {
			d = cur
		}
		out = append(out, d)
	}
	return out
}

// sparkline renders points as a small inline SVG (no script, no external
// resource). Only numbers go into the markup, so it is safe HTML.
func sparkline(pts []float64) template.HTML {
	const w, h = 180.0, 28.0
	if len(pts) == 0 {
		return template.HTML(`<span class="muted">history starts now</span>`)
	}
	max := 0.0
	for _, x := range pts {
		if x > max {
			max = x
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="per-minute increases">`, w, h, w, h)
	step := w / float64(len(pts))
	for i, x := range pts {
		bh := 1.0
		if max > 0 {
			bh = 1 + (h-2)*x/max
		}
		cls := "bar"
		if x > 0 {
			cls = "bar hot"
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%g</title></rect>`, cls, float64(i)*step, h-bh, step*0.8, bh, x)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: numbers only
}
