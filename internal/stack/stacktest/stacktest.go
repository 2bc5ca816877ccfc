// Package stacktest serves the APIs the way the commands assemble them
// (package stack), on loopback ports, for tests. It lives with the
// composition root so that leaf helpers such as testsupport never import
// it.
package stacktest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
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

// TwilioRelay starts a fake Twilio and the outbox relay that sends pool's
// outbox to it (as the worker process does), checking every interval;
// both stop when the test ends.
func TwilioRelay(t testing.TB, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, interval time.Duration) *twilio.FakeServer {
	t.Helper()
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	sender := stack.OutboxSender(cfg, pool, twilio.New(fake.AccountSID, fake.AuthToken, cfg.TwilioFrom, twilio.WithBaseURL(fake.URL())), log)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = sender.Run(ctx, interval) }() // ends with ctx
	t.Cleanup(func() { stop(); <-done })
	return fake
}
