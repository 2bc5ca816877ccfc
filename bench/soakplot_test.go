package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// soakDir keeps each backend's soak figures (<backend>.json, written by
// make soak) and the plots drawn from them, which docs/benchmarks.md
// shows. gonum/plot is used by this test only, so it stays out of the
// shipped binaries.
const soakDir = "../docs/soak"

// soakPoint is one row of the soak as the plots read it.
type soakPoint struct {
	Backend  string             `json:"backend"`
	Open     int                `json:"open"`
	SeedRate float64            `json:"seeded_per_s"`
	P50ms    float64            `json:"p50_ms"`
	P99ms    float64            `json:"p99_ms"`
	Errors   int                `json:"errors"`
	Changes  int                `json:"changes"` // cancels and moves beside the new bookings
	ChP50ms  float64            `json:"change_p50_ms"`
	ChP99ms  float64            `json:"change_p99_ms"`
	ChErrors int                `json:"change_errors"`
	Reminded int                `json:"reminders"` // reminders falling due beside them
	RemErr   int                `json:"reminder_errors"`
	RSSMB    map[string]float64 `json:"rss_mb"`         // peak per process while the new bookings ran
	AnonMB   map[string]float64 `json:"anon_mb"`        // of it, anonymous (not file-backed)
	CPUms    map[string]float64 `json:"cpu_ms_booking"` // per new booking, per process and postgres
	Actions  float64            `json:"temporal_actions_per_booking"`
	Cache    int                `json:"workflow_cache"`
	Hits     float64            `json:"cache_hits"`
	Misses   float64            `json:"cache_misses"`
	History  float64            `json:"history_length"`
	StoresMB float64            `json:"temporal_stores_mb"`
	DBMB     float64            `json:"bookonce_db_mb"`
}

// point is r as the plots read it; names are the processes in r's order.
func (r soakRow) point(names []string) soakPoint {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p := soakPoint{Backend: r.backend, Open: r.open, SeedRate: r.seedRate, P50ms: ms(r.p50), P99ms: ms(r.p99), Errors: r.errors,
		Changes: r.changes.Ops, ChP50ms: ms(r.changes.P50()), ChP99ms: ms(r.changes.P99()), ChErrors: r.changes.Errors,
		Reminded: r.reminders.Ops, RemErr: r.reminders.Errors,
		RSSMB: map[string]float64{}, AnonMB: map[string]float64{}, CPUms: map[string]float64{}, Actions: r.actions, Cache: r.cache.size, Hits: r.cache.hits, Misses: r.cache.misses, History: r.history,
		StoresMB: float64(r.temporalDB) / (1 << 20), DBMB: float64(r.pgBytes) / (1 << 20)}
	for i, m := range r.rss {
		p.RSSMB[names[i]], p.AnonMB[names[i]] = float64(m.rss)/1024, float64(m.anon)/1024
	}
	for i, d := range r.cpu {
		p.CPUms[append(slices.Clone(names), "postgres")[i]] = ms(d)
	}
	return p
}

// writeSoakPoints keeps one backend's rows in soakDir.
func writeSoakPoints(t *testing.T, backend string, points []soakPoint) {
	b, err := json.MarshalIndent(points, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(soakDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(soakDir, backend+".json"), append(b, '\n'), 0o644))
}

// readSoakPoints reads every backend's rows in soakDir.
func readSoakPoints(t *testing.T) []soakPoint {
	files, err := filepath.Glob(filepath.Join(soakDir, "*.json"))
	require.NoError(t, err)
	var all []soakPoint
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var ps []soakPoint
		require.NoError(t, json.Unmarshal(b, &ps), f)
		all = append(all, ps...)
	}
	return all
}

// TestSoakPlots draws docs/soak/memory.svg and latency.svg from the
// figures make soak kept: resident memory per process and the new
// bookings' p50 and p99 against the open lifecycles, for each backend.
func TestSoakPlots(t *testing.T) {
	if os.Getenv("BOOKONCE_SOAK") != "1" {
		t.Skip("BOOKONCE_SOAK=1 (make soak) draws the soak's plots")
	}
	points := readSoakPoints(t)
	require.NotEmpty(t, points, "no figures in %s: run make soak", soakDir)
	var mem, lat []plotLine
	for _, backend := range backendsOf(points) {
		for _, proc := range []string{"worker", "temporal", "bookonce"} {
			mem = append(mem, seriesOf(points, backend, backend+" "+proc, func(p soakPoint) float64 { return p.RSSMB[proc] }))
		}
		lat = append(lat, seriesOf(points, backend, backend+" p50", func(p soakPoint) float64 { return p.P50ms }),
			seriesOf(points, backend, backend+" p99", func(p soakPoint) float64 { return p.P99ms }))
	}
	drawSoak(t, "memory.svg", "Resident memory per process while new bookings run", "MB (peak)", mem)
	drawSoak(t, "latency.svg", "New booking through the whole path, at 2/s", "ms", lat)
}

// plotLine is one line of a plot.
type plotLine struct {
	name string
	xy   plotter.XYs
}

func backendsOf(points []soakPoint) []string {
	var out []string
	for _, p := range points {
		if !slices.Contains(out, p.Backend) {
			out = append(out, p.Backend)
		}
	}
	return out
}

// seriesOf is y of backend's points against their open lifecycles.
func seriesOf(points []soakPoint, backend, name string, y func(soakPoint) float64) plotLine {
	s := plotLine{name: name}
	for _, p := range points {
		if p.Backend == backend {
			s.xy = append(s.xy, plotter.XY{X: float64(p.Open), Y: y(p)})
		}
	}
	slices.SortFunc(s.xy, func(a, b plotter.XY) int { return int(a.X - b.X) })
	return s
}

// drawSoak draws lines against the open lifecycles (a log scale, ticks
// at the levels measured) into soakDir/file: a colour per process or
// quantile, solid for SQLite and dashed for PostgreSQL.
func drawSoak(t *testing.T, file, title, yLabel string, lines []plotLine) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "open lifecycles"
	p.Y.Label.Text = yLabel
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	top := 0.0
	for _, l := range lines {
		for _, xy := range l.xy {
			if !slices.ContainsFunc(ticks, func(tk plot.Tick) bool { return tk.Value == xy.X }) {
				ticks = append(ticks, plot.Tick{Value: xy.X, Label: strconv.Itoa(int(xy.X))})
			}
			top = max(top, xy.Y)
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = 0, top*1.6 // room above the lines for the legend
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	perBackend := len(lines) / max(1, len(backendsOfLines(lines)))
	for i, s := range lines {
		l, pts, err := plotter.NewLinePoints(s.xy)
		require.NoError(t, err)
		c := plotutil.Color(i % max(1, perBackend))
		l.Color, pts.Color = c, c
		l.Dashes = dashesFor(s.name)
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	require.NoError(t, p.Save(8*vg.Inch, 4.5*vg.Inch, filepath.Join(soakDir, file)))
}

// backendsOfLines are the backends the lines are of (the first word of
// their names).
func backendsOfLines(lines []plotLine) []string {
	var out []string
	for _, l := range lines {
		if b, _, _ := strings.Cut(l.name, " "); !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// dashesFor draws PostgreSQL's lines dashed and SQLite's solid.
func dashesFor(name string) []vg.Length {
	if strings.HasPrefix(name, "postgres") {
		return []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return nil
}
