package stack

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/payments"
)

// Registry is a Prometheus registry with the Go and process collectors,
// one per service so that in dev mode each /metrics shows its own service.
func Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return reg
}

func dbHealth(pool *pgxpool.Pool) web.Health {
	return func(ctx context.Context) error { return pool.Ping(ctx) }
}

// CalendarService builds the calendar API service and its key reaper.
func CalendarService(cfg config.Config, pool *pgxpool.Pool, log *slog.Logger) (web.Service, *idempotency.Store) {
	reg := Registry()
	store := idempotency.NewStore(pool, idempotency.Options{TTL: cfg.IdempotencyTTL, Registerer: reg})
	srv := &calendar.Server{
		Pool: pool, Idempotency: store, Tokens: cfg.APITokens, Timezone: cfg.Timezone,
		HoldTTL: cfg.HoldTTL, Logger: log.With("service", "calendar"),
	}
	return web.Service{Name: "calendar", Handler: srv.Handler(), Health: dbHealth(pool), Gatherer: reg, Logger: log}, store
}

// PaymentsService builds the Stripe-compatible payment API service.
func PaymentsService(cfg config.Config, pool *pgxpool.Pool, log *slog.Logger) (web.Service, *idempotency.Store) {
	reg := Registry()
	store := idempotency.NewStore(pool, idempotency.Options{TTL: cfg.IdempotencyTTL, Registerer: reg, ProblemStyle: idempotency.StripeJSON})
	srv := &payments.Server{Pool: pool, Idempotency: store, Tokens: cfg.APITokens, Logger: log.With("service", "payments")}
	return web.Service{Name: "payments", Handler: srv.Handler(), Health: dbHealth(pool), Gatherer: reg, Logger: log}, store
}

// ReapEvery is how often expired idempotency keys are deleted.
const ReapEvery = time.Minute

// GatewayService builds the webhook gateway service.
func GatewayService(pool *pgxpool.Pool, tc client.Client, log *slog.Logger) web.Service {
	g := &channels.Gateway{Pool: pool, Temporal: tc}
	return web.Service{Name: "gateway", Handler: g.Handler(), Health: g.Health, Gatherer: Registry(), Logger: log}
}
