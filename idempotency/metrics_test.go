package idempotency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, idempotency.Options{Lease: 30 * time.Second})
	m := e.store.Metrics()
	val := func(c *prometheus.CounterVec, labels ...string) float64 {
		return testutil.ToFloat64(c.WithLabelValues(labels...))
	}

	require.Equal(t, http.StatusCreated, e.post("m1", demoRequest{Customer: "m"}).status)
	require.True(t, e.post("m1", demoRequest{Customer: "m"}).replayed)
	require.Equal(t, http.StatusUnprocessableEntity, e.post("m1", demoRequest{Customer: "other"}).status)

	// A held request: one 409, then a takeover after its lease.
	entered, release := make(chan struct{}), make(chan struct{})
	e.hooks.Store("held", func() { close(entered); <-release })
	done := make(chan response, 1)
	go func() { done <- e.post("m2", demoRequest{Customer: "held"}) }()
	<-entered
	require.Equal(t, http.StatusConflict, e.post("m2", demoRequest{Customer: "held"}).status)
	e.hooks.Store("held", func() {})
	e.clock.Advance(time.Minute)
	require.Equal(t, http.StatusCreated, e.post("m2", demoRequest{Customer: "held"}).status)
	close(release)
	require.Equal(t, http.StatusConflict, (<-done).status, "fenced")

	op := opCreate
	require.InDelta(t, 3, val(m.Claims, "tenant-a", op), 0, "m1, m2, m2 taken over")
	require.InDelta(t, 1, val(m.Replays, "tenant-a", op), 0)
	require.InDelta(t, 2, val(m.InFlight, "tenant-a", op), 0, "the duplicate and the fenced holder")
	require.InDelta(t, 1, val(m.PayloadMismatch, "tenant-a", op), 0)
	require.InDelta(t, 1, val(m.LeaseTakeovers, "tenant-a", op), 0)
	require.InDelta(t, 4, val(m.DuplicatesBlocked, "idempotency", "tenant-a", op), 0)

	// Everything is on the registry under its documented name.
	for name, want := range map[string]int{
		"bookonce_idempotency_claims_total":           1,
		"bookonce_idempotency_replays_total":          1,
		"bookonce_idempotency_in_flight_total":        1,
		"bookonce_idempotency_payload_mismatch_total": 1,
		"bookonce_idempotency_lease_takeovers_total":  1,
		"bookonce_idempotency_expired_deleted_total":  1,
		"bookonce_idempotency_claim_seconds":          1,
		"bookonce_duplicates_blocked_total":           1,
	} {
		n, err := testutil.GatherAndCount(e.reg, name)
		require.NoError(t, err)
		require.Equal(t, want, n, name)
	}
	hist, err := e.reg.Gather()
	require.NoError(t, err)
	for _, mf := range hist {
		if mf.GetName() == "bookonce_idempotency_claim_seconds" {
			require.GreaterOrEqual(t, mf.GetMetric()[0].GetHistogram().GetSampleCount(), uint64(6))
		}
	}

	// A second store on the same registry shares the collectors.
	s2 := idempotency.NewStore(e.pool, idempotency.Options{Registerer: e.reg, Now: e.clock.Now})
	require.Same(t, m.Claims, s2.Metrics().Claims)
	_, err = s2.Reap(context.Background(), 10)
	require.NoError(t, err)
}

// TestLogEnvelope: one structured line per keyed request, a replay logged
// as a warning with replayed=true, and never the request body.
func TestLogEnvelope(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	pool := testsupport.Database(t)
	store := idempotency.NewStore(pool, idempotency.Options{Logger: logger})
	h := store.Middleware("POST /v1/things", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/v1/things", strings.NewReader(`{"customer":"+4915112345678"}`))
		req.Header.Set("Idempotency-Key", "log-key")
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), req.WithContext(web.WithTenant(req.Context(), "demo")))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &second))
	require.Equal(t, "claimed", first["state"])
	require.Equal(t, "INFO", first["level"])
	require.Equal(t, "replayed", second["state"])
	require.Equal(t, true, second["replayed"])
	require.Equal(t, "WARN", second["level"])
	for _, k := range []string{"tenant", "operation", "key", "fingerprint", "status", "duration_ms"} {
		require.Contains(t, second, k)
	}
	require.NotContains(t, buf.String(), "4915112345678", "bodies are never logged")
}
