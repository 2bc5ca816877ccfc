package channels_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
)

// scrape GETs /metrics as Prometheus does and parses the text format.
func scrape(t *testing.T, baseURL string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(baseURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return mfs
}

// value is the value of the series of family name whose labels include
// want (0 when there is none: a counter not yet touched).
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
	for _, m := range mfs[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if match {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// acceptedPhases is how many webhooks bookonce_booking_phase_seconds has
// timed to their inbox row (phase accepted).
func acceptedPhases(mfs map[string]*dto.MetricFamily) uint64 {
	var n uint64
	for _, m := range mfs["bookonce_booking_phase_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "phase" && l.GetValue() == "accepted" {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

// TestReplayedWebhookMovesTheInboxCounterOnMetrics: the gateway's /metrics
// (on its admin listener),
// scraped over HTTP, counts every redelivery of a WhatsApp message in
// bookonce_duplicates_blocked_total{layer="inbox",tenant="demo",route=...};
// the inbox holds one row, and Temporal saw one SignalWithStart (the
// gateway's SDK metrics are on the same /metrics).
func TestReplayedWebhookMovesTheInboxCounterOnMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TwilioAuthToken = "metrics-test-token"
	cfg.PublicBaseURL = "https://bookonce.example"
	cfg.TemporalAddress = temporaltest.HostPort(t)
	cfg.TaskQueue = testsupport.TaskQueue(t) // no worker: only the edge is under test
	log := stack.Logger(cfg, io.Discard)
	reg := stack.Registry()
	tc, err := stack.Dial(ctx, cfg, log, stack.WithMetrics(reg))
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	gw, reg := stack.GatewayOn(reg, cfg, pool, tc, testsupport.Tenants(t, pool), log)
	srv := httptest.NewServer(stack.GatewayService(gw, reg, log).Mux())
	t.Cleanup(srv.Close)
	admin := httptest.NewServer(stack.AdminService(gw, reg, log).Mux())
	t.Cleanup(admin.Close)
	sim := twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken}

	sid := twilio.NewSID("SM")
	form := twilio.WhatsApp(sid, fmt.Sprintf("+49151%08d", rand.IntN(100000000)), "Reifenwechsel am Dienstag um 14 Uhr")
	inbox := map[string]string{"layer": "inbox", "tenant": "demo", "route": channels.RouteWhatsApp}
	signals := map[string]string{"operation": "SignalWithStartWorkflowExecution"}
	for i, want := range []float64{0, 1, 2} { // the first delivery, then two redeliveries
		status, _, err := sim.Post(ctx, channels.RouteWhatsApp, form)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		mfs := scrape(t, admin.URL)
		require.Equal(t, want, value(mfs, "bookonce_duplicates_blocked_total", inbox), "after delivery %d", i+1)
		require.Equal(t, 1.0, value(mfs, "bookonce_webhooks_accepted_total", map[string]string{"route": channels.RouteWhatsApp}))
		require.Equal(t, 1.0, value(mfs, "temporal_request_total", signals), "one signal to the conversation, not one per delivery")
		require.Equal(t, 1.0, value(mfs, "bookonce_state_up", nil))
		require.Equal(t, uint64(1), acceptedPhases(mfs), "the first delivery's accepted phase, not a redelivery's")
	}
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbox_events WHERE event_id = $1`, sid).Scan(&rows))
	require.Equal(t, 1, rows)
}
