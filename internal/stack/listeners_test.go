package stack_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/internal/web"
)

// TestGatewayAdminSurfaceIsOnlyOnTheAdminListener: the public listener
// (GATEWAY_LISTEN, which Twilio and the payment provider call) answers
// 404 for the ops page, the review and booking APIs and /metrics, and
// its /healthz names nothing; the admin listener (ADMIN_LISTEN) serves
// them all, with a token where they need one.
func TestGatewayAdminSurfaceIsOnlyOnTheAdminListener(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	gw, reg := stack.Gateway(cfg, pool, temporaltest.Temporal(t), testsupport.Tenants(t, pool), log)
	public := httptest.NewServer(stack.GatewayService(gw, reg, log).Mux())
	t.Cleanup(public.Close)
	admin := httptest.NewServer(stack.AdminService(gw, reg, log).Mux())
	t.Cleanup(admin.Close)

	cases := []struct {
		name, method, path string
		public, admin      int
	}{
		{"ops page", http.MethodGet, "/ops", http.StatusNotFound, http.StatusOK},
		{"ops sign-in", http.MethodPost, "/ops/login", http.StatusNotFound, http.StatusUnauthorized},
		{"review cases", http.MethodGet, "/v1/review-cases", http.StatusNotFound, http.StatusOK},
		{"cancel", http.MethodPost, "/v1/appointments/appointment:demo:x/cancel", http.StatusNotFound, http.StatusBadRequest},
		{"reschedule", http.MethodPost, "/v1/appointments/appointment:demo:x/reschedule", http.StatusNotFound, http.StatusBadRequest},
		{"no-show", http.MethodPost, "/v1/appointments/appointment:demo:x/no-show", http.StatusNotFound, http.StatusBadRequest},
		{"metrics", http.MethodGet, "/metrics", http.StatusNotFound, http.StatusOK},
		{"healthz", http.MethodGet, "/healthz", http.StatusOK, http.StatusOK},
		{"return page", http.MethodGet, "/paid", http.StatusOK, http.StatusNotFound},
		{"webhook", http.MethodPost, "/webhooks/twilio/whatsapp", http.StatusForbidden, http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.public, status(t, c.method, public.URL+c.path), "public listener")
			require.Equal(t, c.admin, status(t, c.method, admin.URL+c.path), "admin listener")
		})
	}
}

// status is the answer's status code, with the development token.
func status(t *testing.T, method, url string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode
}

// TestPublicHealthzHidesWhy: an unhealthy public service answers 503
// with its status only; the error (hosts, databases) is shown on the
// admin listener's /healthz alone.
func TestPublicHealthzHidesWhy(t *testing.T) {
	failing := func(context.Context) error { return errors.New("postgres: dial tcp 10.0.0.7:5432: refused") }
	for _, c := range []struct {
		name   string
		public bool
		want   map[string]string
	}{
		{"public", true, map[string]string{"status": "unhealthy"}},
		{"admin", false, map[string]string{"status": "unhealthy", "service": "gw", "error": "postgres: dial tcp 10.0.0.7:5432: refused"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := web.Service{Name: "gw", Health: failing, Public: c.public, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			srv := httptest.NewServer(svc.Mux())
			t.Cleanup(srv.Close)
			res, err := http.Get(srv.URL + "/healthz")
			require.NoError(t, err)
			defer res.Body.Close()
			require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
			var got map[string]string
			require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
			require.Equal(t, c.want, got)
		})
	}
}
