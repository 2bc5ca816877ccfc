package ops_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/ops"
	"github.com/bookonce/bookonce/review"
)

// replica is one process's registry, named as stack.Registry names it,
// with the inbox duplicates it blocked, and its /metrics served over HTTP
// as another replica's ops page scrapes it.
type replica struct {
	reg     *prometheus.Registry
	metrics string
}

func newReplica(t *testing.T, inboxBlocked float64) replica {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDuplicatesBlocked, Help: "h"}, []string{"layer", "tenant", "route"})
	reg.MustRegister(c, ops.RegistryCollector())
	c.WithLabelValues("inbox", tenant, "/webhooks/twilio/whatsapp").Add(inboxBlocked)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return replica{reg: reg, metrics: srv.URL + "/metrics"}
}

// replicaSet is a "dns+" scrape target whose host resolves to the
// addresses of the given replicas. Each replica listens on its own
// loopback address (127.0.0.2, 127.0.0.3, …) at one shared port, as pods
// behind a headless Service do.
func replicaSet(t *testing.T, rs ...replica) telemetry.Replicas {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	var addrs []string
	for i, r := range rs {
		if i > 0 {
			ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.%d:%d", i+2, port))
			require.NoError(t, err)
		}
		srv := &http.Server{Handler: promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: time.Second}
		go func(ln net.Listener) { _ = srv.Serve(ln) }(ln) // ends with Close below
		t.Cleanup(func() { require.NoError(t, srv.Close()) })
		addrs = append(addrs, fmt.Sprintf("127.0.0.%d", i+2))
	}
	target := telemetry.ScrapeTarget(telemetry.ReplicaScheme + fmt.Sprintf("http://gateway-replicas:%d/metrics", port))
	set, ok := target.(telemetry.Replicas)
	require.True(t, ok, "a dns+ entry is a replica set")
	set.Lookup = func(_ context.Context, host string) ([]string, error) {
		require.Equal(t, "gateway-replicas", host)
		return addrs, nil
	}
	return set
}

// TestCountersCountEveryReplicaOnce: with gateway replicas every one's
// OPS_SCRAPE_URLS lists all replicas, its own admin listener included;
// the page on any replica shows the sum over replicas, each once.
func TestCountersCountEveryReplicaOnce(t *testing.T) {
	pool := testsupport.Database(t)
	a, b := newReplica(t, 3), newReplica(t, 2)
	for _, tc := range []struct {
		name      string
		gatherers []prometheus.Gatherer
		want      string
	}{
		{"one replica, no scrapes", []prometheus.Gatherer{a.reg}, "3"},
		{"own registry scraped again through the replica list", []prometheus.Gatherer{a.reg, telemetry.Remote{URL: a.metrics}}, "3"},
		{"two replicas, every replica listed", []prometheus.Gatherer{a.reg, telemetry.Remote{URL: a.metrics}, telemetry.Remote{URL: b.metrics}}, "5"},
		{"the other replica listed twice", []prometheus.Gatherer{b.reg, telemetry.Remote{URL: a.metrics}, telemetry.Remote{URL: a.metrics}}, "5"},
		{"every replica behind one name (headless Service)", []prometheus.Gatherer{a.reg, replicaSet(t, a, b)}, "5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := &ops.Page{Pool: pool, Reviews: &review.Resolver{Store: &review.Store{Pool: pool}}, Gatherers: tc.gatherers,
				UIBaseURL: uiBase, Namespace: "default", Tokens: ops.StaticTokens{token: tenant}}
			srv := httptest.NewServer(page.Handler())
			t.Cleanup(srv.Close)
			res, body := get(t, http.DefaultClient, srv.URL+"/ops", token)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Contains(t, body, `id="layer-inbox" data-total="`+tc.want+`"`)
		})
	}
}
