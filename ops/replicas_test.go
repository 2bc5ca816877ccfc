package ops_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

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
