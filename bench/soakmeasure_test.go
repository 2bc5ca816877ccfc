package bench

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// cpuSnap is the CPU time of each of the soak's processes and of every
// PostgreSQL process at one moment.
type cpuSnap struct {
	procs []time.Duration
	pg    map[string]time.Duration
}

// procCPUs reads the CPU time of procs and of PostgreSQL.
func procCPUs(t *testing.T, procs []proc) cpuSnap {
	s := cpuSnap{pg: procCPU("postgres")}
	for _, p := range procs {
		d, err := p.cpu()
		require.NoError(t, err, p.name)
		s.procs = append(s.procs, d)
	}
	return s
}

// since is the CPU each process, then PostgreSQL, used from s0 to s.
func (s cpuSnap) since(s0 cpuSnap) []time.Duration {
	var out []time.Duration
	for i, d := range s.procs {
		out = append(out, d-s0.procs[i])
	}
	return append(out, pgDelta(s0.pg, s.pg))
}

// whilePeaks runs f and reads the resident set of each of procs every
// 250 ms meanwhile; it returns f's result and each one's reading with the
// largest resident set.
func whilePeaks(t *testing.T, procs []proc, f func() Result) (Result, []resident) {
	peaks := make([]resident, len(procs))
	r := sampling(t, f, func() error {
		var errs error
		for i, p := range procs {
			m, err := p.rss()
			if m.rss > peaks[i].rss {
				peaks[i] = m
			}
			errs = errors.Join(errs, err)
		}
		return errs
	})
	return r, peaks
}

// cacheReading is the worker's workflow cache as its /metrics tells:
// the workflows in it, and so far its hits and its misses (a task for a
// workflow no longer cached: its history is fetched and replayed). The
// SDK's forced-eviction count is not read: it also counts workflows that
// have just completed.
type cacheReading struct {
	size         int
	hits, misses float64
}

// String is "hits / misses".
func (c cacheReading) String() string { return fmt.Sprintf("%.0f / %.0f", c.hits, c.misses) }

// since is c with its counts from c0 on.
func (c cacheReading) since(c0 cacheReading) cacheReading {
	return cacheReading{size: c.size, hits: c.hits - c0.hits, misses: c.misses - c0.misses}
}

// readCache scrapes the SDK's sticky cache metrics from a worker's
// /metrics.
func readCache(t *testing.T, metricsURL string) cacheReading {
	var c cacheReading
	var size float64
	counts := map[string]*float64{"temporal_sticky_cache_hit_total": &c.hits, "temporal_sticky_cache_miss_total": &c.misses}
	scrape(t, metricsURL, func(name string, _ map[string]string, v float64) {
		if to, ok := counts[name]; ok {
			*to += v // summed over the workflow types
		} else if name == "temporal_sticky_cache_size" {
			size = max(size, v) // one cache, reported by each workflow type's last task
		}
	})
	c.size = int(size)
	return c
}

// serverCounters is one reading of the Temporal server's /metrics: its
// count of actions so far, what Temporal Cloud bills and limits per
// namespace and second (the frontend's "action" counter;
// docs.temporal.io, "Estimate Actions"), and of its requests.
type serverCounters struct {
	actions  float64
	requests serverRequests
}

// readServer scrapes the server's counters once.
func readServer(t *testing.T, metricsURL string) serverCounters {
	c := serverCounters{requests: serverRequests{}}
	scrape(t, metricsURL, func(name string, labels map[string]string, v float64) {
		switch kind := strings.TrimSuffix(name, "_total"); {
		case kind == "action" && labels["service_name"] == "frontend":
			c.actions += v
		case kind == "service_requests" || kind == "persistence_requests":
			c.requests[fmt.Sprintf("%-20s %-9s %s", kind, labels["service_name"], labels["operation"])] += v
		}
	})
	return c
}

// scrape reads a /metrics page (telemetry.Remote, as the ops page does)
// and calls each for every counter and gauge sample.
func scrape(t *testing.T, metricsURL string, each func(name string, labels map[string]string, v float64)) {
	families, err := telemetry.Remote{URL: metricsURL, Timeout: 10 * time.Second}.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				each(f.GetName(), labels, m.GetCounter().GetValue())
			case m.GetGauge() != nil:
				each(f.GetName(), labels, m.GetGauge().GetValue())
			}
		}
	}
}

// writeHeapProfiles keeps, with SOAK_PROFILE_DIR set, each child's heap
// profile after a collection as heap-<name>-<proc>.pb.gz (go tool pprof
// -sample_index=inuse_space) and as text with the runtime's MemStats
// (heap-<name>-<proc>.txt): what its memory holds at a level.
func writeHeapProfiles(t *testing.T, name string, procs []proc) {
	dir := os.Getenv("SOAK_PROFILE_DIR")
	if dir == "" {
		return
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, p := range procs {
		if p.pprof == "" {
			continue
		}
		resp, err := http.Get("http://" + p.pprof + "/debug/pprof/heap?gc=1")
		require.NoError(t, err, p.name)
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err, p.name)
		require.Equal(t, http.StatusOK, resp.StatusCode, p.name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("heap-%s-%s.pb.gz", name, p.name)), b, 0o644))
		// The text form ends with the runtime's MemStats: what of the
		// anonymous RSS is live heap, freed heap not yet returned, stacks.
		resp, err = http.Get("http://" + p.pprof + "/debug/pprof/heap?debug=1")
		require.NoError(t, err, p.name)
		b, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err, p.name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("heap-%s-%s.txt", name, p.name)), b, 0o644))
	}
}
