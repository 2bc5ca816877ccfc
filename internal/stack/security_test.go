package stack_test

// What the internet-facing listeners show without a token
// (docs/security.md).

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

// TestAgentListenerShowsNothingWithoutAToken: the agent listener is
// internet-facing by design. Without a token it serves no metrics (they
// named tenants and volumes, and each scrape queried four tables) and a
// /healthz that says only "ok". Before, both were served in full.
func TestAgentListenerShowsNothingWithoutAToken(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc := testsupport.Temporal(t)
	tenants := testsupport.Tenants(t, pool)
	gw, reg := stack.Gateway(cfg, pool, tc, tenants, log)
	tools := stack.Agent(cfg, pool, tc, reg, gw, tenants, log)
	srv := httptest.NewServer(stack.AgentService(tools, gw, log).Mux())
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no metrics without a token")

	res, err = http.Get(srv.URL + "/healthz")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	require.Equal(t, map[string]string{"status": "ok"}, got)
}

// TestPublicHealthzChecksOncePerInterval: anonymous /healthz requests on a
// public listener share one check per interval, so a flood of them
// cannot drain the database pool webhooks need. The admin listener
// checks every time.
func TestPublicHealthzChecksOncePerInterval(t *testing.T) {
	for _, c := range []struct {
		public bool
		checks int64
	}{{true, 1}, {false, 20}} {
		var checks atomic.Int64
		svc := web.Service{Name: "gw", Public: c.public, HealthEvery: time.Hour,
			Health: func(context.Context) error { checks.Add(1); return nil }}
		srv := httptest.NewServer(svc.Mux())
		for range 20 {
			res, err := http.Get(srv.URL + "/healthz")
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusOK, res.StatusCode)
		}
		srv.Close()
		require.Equal(t, c.checks, checks.Load(), "public %v", c.public)
	}
}
