package testsupport

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/tenants"
)

// Config returns the dev configuration (as with no environment), for
// tests that assemble services the way the commands do.
func Config(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	return cfg
}

// CalendarAPI serves the calendar API on a loopback port backed by pool.
func CalendarAPI(t testing.TB, cfg config.Config, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	svc, _ := stack.CalendarService(cfg, pool, Tenants(t, pool), stack.Logger(cfg, LogWriter(t)))
	srv := httptest.NewServer(svc.Mux())
	t.Cleanup(srv.Close)
	return srv
}

// PaymentsAPI serves the payment API on a loopback port backed by pool.
func PaymentsAPI(t testing.TB, cfg config.Config, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	svc, _ := stack.PaymentsService(cfg, pool, Tenants(t, pool), stack.Logger(cfg, LogWriter(t)))
	srv := httptest.NewServer(svc.Mux())
	t.Cleanup(srv.Close)
	return srv
}

// Tenants loads the tenants registry of pool (the demo tenant of a
// testsupport.Database, plus whatever the test applied before). It is
// not reloaded in the background: a test that applies a file afterwards
// calls Reload.
func Tenants(t testing.TB, pool *pgxpool.Pool) *tenants.Registry {
	t.Helper()
	reg, err := tenants.LoadRegistry(context.Background(), pool, nil)
	require.NoError(t, err)
	return reg
}

// LogWriter sends what is written to it (service logs) to the test log,
// which go test shows only when the test fails or with -v.
func LogWriter(t testing.TB) io.Writer { return testWriter{t} }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
