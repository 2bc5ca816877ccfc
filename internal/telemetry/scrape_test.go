package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
)

// TestRemoteReadsAnotherProcessesCounters: what a service exposes on
// /metrics arrives through Remote as the same counter values.
func TestRemoteReadsAnotherProcessesCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	dups := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bookonce_duplicates_blocked_total", Help: "h"}, []string{"layer", "tenant", "route"})
	reg.MustRegister(dups)
	dups.WithLabelValues("dedup", "demo", "voice+whatsapp").Add(3)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	families, err := telemetry.Remote{URL: srv.URL + "/metrics"}.Gather()
	require.NoError(t, err)
	require.Len(t, families, 1)
	require.Equal(t, "bookonce_duplicates_blocked_total", families[0].GetName())
	require.Equal(t, 3.0, families[0].GetMetric()[0].GetCounter().GetValue())

	for name, url := range map[string]string{
		"not found": srv.URL + "/nothing-here?x", "nobody listens": "http://127.0.0.1:1/metrics",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := telemetry.Remote{URL: url}.Gather()
			require.ErrorContains(t, err, "scrape "+url)
		})
	}
	notMetrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{not: metrics}")) }))
	t.Cleanup(notMetrics.Close)
	_, err = telemetry.Remote{URL: notMetrics.URL}.Gather()
	require.Error(t, err)
}
