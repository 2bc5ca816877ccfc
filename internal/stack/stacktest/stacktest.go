// Package stacktest serves the APIs the way the commands assemble them
// (package stack), on loopback ports, for tests. It lives with the
// composition root so that leaf helpers such as testsupport never import
// it.
package stacktest

import (
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// CalendarAPI serves the calendar API on a loopback port backed by pool.
func CalendarAPI(t testing.TB, cfg config.Config, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	svc, _ := stack.CalendarService(cfg, pool, testsupport.Tenants(t, pool), stack.Logger(cfg, testsupport.LogWriter(t)))
	srv := httptest.NewServer(svc.Mux())
	t.Cleanup(srv.Close)
	return srv
}

// PaymentsAPI serves the payment API on a loopback port backed by pool.
func PaymentsAPI(t testing.TB, cfg config.Config, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	svc, _ := stack.PaymentsService(cfg, pool, testsupport.Tenants(t, pool), stack.Logger(cfg, testsupport.LogWriter(t)))
	srv := httptest.NewServer(svc.Mux())
	t.Cleanup(srv.Close)
	return srv
}
