package stack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/ops"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/payments/stripeapi"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
)

// Registry is a Prometheus registry with the Go and process collectors,
// one per service so that in dev mode each /metrics shows its own service,
// and the gauge that names it, so that an ops page scraping every replica
// (its own included) counts each registry once.
func Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), ops.RegistryCollector())
	return reg
}

func dbHealth(pool *pgxpool.Pool) web.Health {
	return func(ctx context.Context) error { return pool.Ping(ctx) }
}

// apiTokens authenticates a caller of the calendar or payment API (aud):
// a tenant by its own token (api_token_sha256), or the worker by a
// service token it minted for a tenant the registry knows now.
func apiTokens(cfg config.Config, reg *tenants.Registry, aud servicetoken.Audience) web.TokenLookup {
	known := func(tenant string) bool { _, ok := reg.Get(tenant); return ok }
	return web.AnyOf(reg.Authenticate, cfg.ServiceVerifier(aud, known).Lookup)
}

// CalendarService builds the calendar API's public service
// (CALENDAR_LISTEN) and its key reaper: tokens and each tenant's time
// zone come from the tenants registry. A shop's front desk may call it
// across the internet, so: a /healthz without details, no /metrics
// (CalendarAdminService serves both), and no joining of a trace a caller
// sends: the internet does not choose our trace IDs.
func CalendarService(cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry, log *slog.Logger) (web.Service, *idempotency.Store) {
	reg := Registry()
	store := idempotency.NewStore(pool, idempotency.Options{TTL: cfg.IdempotencyTTL, QuotaPerMinute: cfg.KeysPerMinute, Registerer: reg, Logger: log.With("service", "calendar"), Sealer: cfg.PayloadCodec})
	srv := &calendar.Server{
		AuthLimiter: AuthLimiter(cfg),
		Pool:        pool, Idempotency: store, Tokens: apiTokens(cfg, tenants, servicetoken.Calendar), Timezone: cfg.Timezone, Zones: tenants.Zone,
		HoldTTL: cfg.HoldTTL, Logger: log.With("service", "calendar"),
	}
	return web.Service{Name: "calendar", Handler: srv.Handler(), Health: dbHealth(pool), Gatherer: reg, Logger: log, Public: true}, store
}

// CalendarAdminService builds the calendar API's private service
// (CALENDAR_ADMIN_LISTEN) for the public one: its /metrics and a
// detailed /healthz, and no API.
func CalendarAdminService(public web.Service) web.Service {
	return web.Service{Name: "calendar-admin", Health: public.Health, Gatherer: public.Gatherer, Logger: public.Logger}
}

// PaymentsService builds the payment API's public service
// (PAYMENTS_LISTEN): the Stripe-compatible API, whose secret keys are the
// tenants' API tokens, and the hosted payment page, which customers'
// browsers reach from the internet. A /healthz without details, no
// /metrics (PaymentsAdminService serves both), and no joining of a trace
// a caller sends: the internet does not choose our trace IDs.
func PaymentsService(cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry, log *slog.Logger) (web.Service, *idempotency.Store) {
	reg := Registry()
	store := idempotency.NewStore(pool, idempotency.Options{TTL: cfg.IdempotencyTTL, QuotaPerMinute: cfg.KeysPerMinute, Registerer: reg, ProblemStyle: idempotency.StripeJSON, Logger: log.With("service", "payments"), Sealer: cfg.PayloadCodec})
	srv := &stripeapi.Server{
		AuthLimiter: AuthLimiter(cfg),
		Pool:        pool, Idempotency: store, Tokens: apiTokens(cfg, tenants, servicetoken.Payments), Logger: log.With("service", "payments"), Timezone: cfg.Timezone,
		PageBaseURL:            cfg.PaymentsPublicURL, // empty: the address the API was called on
		SearchLag:              cfg.PaymentsSearchLag, // 0: search is consistent
		AllowLoopbackEndpoints: cfg.WebhookLoopback,
	}
	return web.Service{Name: "payments", Handler: srv.Handler(), Health: dbHealth(pool), Gatherer: reg, Logger: log, Public: true}, store
}

// PaymentsAdminService builds the payment API's private service
// (PAYMENTS_ADMIN_LISTEN) for the public one: its /metrics and a
// detailed /healthz, and no API.
func PaymentsAdminService(public web.Service) web.Service {
	return web.Service{Name: "payments-admin", Health: public.Health, Gatherer: public.Gatherer, Logger: public.Logger}
}

// DeliverEvery is how often the payment API claims due webhooks (also
// whenever a delivery ends) and, in a loop of its own, expires due
// Checkout Sessions.
const DeliverEvery = time.Second

// PaymentsWebhooks builds the payment API's webhook deliverer, with the
// configured endpoint (STRIPE_WEBHOOK_URL, or STRIPE_WEBHOOK_URL/<tenant>
// for a tenant with its own secret: config.WebhookEndpoint) for every
// tenant: those of
// the tenants registry (reg, nil: none), including shops applied while it
// runs, and those BOOKONCE_API_TOKENS names. The payment API itself holds
// no shop's plain token, so the registry is what lists them all.
func PaymentsWebhooks(cfg config.Config, pool *pgxpool.Pool, reg *tenants.Registry, log *slog.Logger) *stripeapi.Deliverer {
	d := &stripeapi.Deliverer{Pool: pool, Twice: cfg.StripeWebhookTwice, AllowLoopback: cfg.WebhookLoopback, Logger: log.With("service", "payments")}
	if cfg.StripeWebhookURL == "" {
		return d
	}
	endpoint := func(tenant string) stripeapi.ConfigEndpoint {
		u, secret := cfg.WebhookEndpoint(tenant)
		return stripeapi.ConfigEndpoint{Tenant: tenant, URL: u, Secret: secret, Configured: cfg.StripeWebhookURL}
	}
	for _, tenant := range cfg.Tenants() {
		d.Endpoints = append(d.Endpoints, endpoint(tenant))
	}
	if reg != nil {
		d.EndpointsOf = func() []stripeapi.ConfigEndpoint {
			var out []stripeapi.ConfigEndpoint
			for _, p := range reg.All() {
				out = append(out, endpoint(p.ID))
			}
			return out
		}
	}
	return d
}

// ReapEvery is how often expired idempotency keys are deleted.
const ReapEvery = time.Minute

// RelayEvery is how often the gateway re-delivers inbox events that could
// not reach Temporal when they arrived.
const RelayEvery = 5 * time.Second

// WorkerService serves the worker's health and metrics on a new Registry.
func WorkerService(pool *pgxpool.Pool, tc client.Client, log *slog.Logger) web.Service {
	return WorkerServiceOn(Registry(), pool, tc, log)
}

// WorkerServiceOn serves the worker's health and metrics on reg: dedup
// decisions, duplicates blocked at the outbox and dedup layers, the review
// and outbox gauges, and the Temporal SDK metrics when tc was dialled
// WithMetrics(reg).
func WorkerServiceOn(reg *prometheus.Registry, pool *pgxpool.Pool, tc client.Client, log *slog.Logger) web.Service {
	reg.MustRegister(activities.Collectors()...)
	reg.MustRegister(shopcal.Collectors()...)
	reg.MustRegister(&telemetry.State{Pool: pool, Log: log})
	return web.Service{Name: "worker", Gatherer: reg, Logger: log, Health: func(ctx context.Context) error {
		if err := pool.Ping(ctx); err != nil {
			return err
		}
		_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}}
}

// ConversationCard pays the deposits of bookings that conversations start
// when DEPOSIT_MODE=card (the amount is the service's, from tenants.yaml).
const ConversationCard = "pm_card_visa"

// ConversationPaymentMethod is the payment method conversations start
// bookings with: none in link mode (the payment saga sends a payment
// link), the lab's test card in card mode.
func ConversationPaymentMethod(cfg config.Config) string {
	if cfg.DepositMode == config.DepositCard {
		return ConversationCard
	}
	return ""
}

// Gateway builds the webhook gateway with its ops page on a new Registry.
// The page reads the duplicate counters of the gateway and of any other
// registries given (in dev mode: calendar, payments and worker, which run
// in-process). Webhooks are routed, and tokens checked, by tenants.
func Gateway(cfg config.Config, pool *pgxpool.Pool, tc client.Client, tenants *tenants.Registry, log *slog.Logger, more ...prometheus.Gatherer) (*channels.Gateway, *prometheus.Registry) {
	return GatewayOn(Registry(), cfg, pool, tc, tenants, log, more...)
}

// AuthLimiter is a process's failed-authentication budget per client,
// the client's address taken from X-Forwarded-For behind
// TRUSTED_PROXIES only.
func AuthLimiter(cfg config.Config) *web.AuthLimiter {
	return web.NewAuthLimiter(web.AuthFailuresPerMinute, web.AuthFailureBurst).Trust(cfg.TrustedProxies)
}

// GatewayOn is Gateway with its metrics on reg, the registry tc was
// dialled WithMetrics on, so /metrics shows the gateway's Temporal calls too.
func GatewayOn(reg *prometheus.Registry, cfg config.Config, pool *pgxpool.Pool, tc client.Client, tenants *tenants.Registry, log *slog.Logger, more ...prometheus.Gatherer) (*channels.Gateway, *prometheus.Registry) {
	reg.MustRegister(&telemetry.State{Pool: pool, Log: log})
	reviews := &review.Resolver{Store: &review.Store{Pool: pool}, Temporal: tc}
	gw := &channels.Gateway{
		AuthLimiter: AuthLimiter(cfg),
		Pool:        pool, Temporal: tc, TaskQueue: cfg.TaskQueue, Tenants: tenants,
		TwilioAuthToken: cfg.TwilioAuthToken, PublicBaseURL: cfg.PublicBaseURL, Region: "DE", PaymentMethod: ConversationPaymentMethod(cfg),
		StripeWebhookSecret: cfg.StripeWebhookSecret, StripeTenantSecrets: cfg.StripeWebhookSecrets, Keys: cfg.CustomerKeys(), VoiceConfirmWait: cfg.VoiceConfirmWait,
		Tokens: tenants.Authenticate, Reviews: reviews, Outbox: &outbox.Store{Pool: pool, Sealer: cfg.PayloadCodec}, Sealer: cfg.PayloadCodec, Metrics: channels.NewMetrics(reg),
		Logger: log.With("service", "gateway"),
	}
	page := &ops.Page{
		Pool: pool, Reviews: reviews,
		Gatherers: append([]prometheus.Gatherer{reg}, more...),
		UIBaseURL: fmt.Sprintf("http://127.0.0.1:%d", cfg.TemporalUIPort), Namespace: cfg.TemporalNamespace,
		Tokens: tenants, SessionKey: opsSessionKey(cfg), Logger: log.With("service", "ops"), Temporal: tc,
		Limiter: gw.AuthLimiter,
	}
	gw.Ops = page.Handler()
	// The shops' Google and Microsoft calendars push their changes here.
	gw.Webhooks = (&shopcal.Receiver{Channels: &shopcal.Channels{Pool: pool}, Log: log.With("service", "gateway")}).Routes()
	if cfg.PayloadCodec != nil { // the codec server, behind the ops sign-in
		mux := http.NewServeMux()
		mux.Handle("/", gw.Ops)
		HandleCodec(mux, cfg, page.Authorized, log)
		gw.Ops = mux
	}
	return gw, reg
}

// opsSessionKey keys the ops page's session cookies with the secret every
// gateway replica shares (OPS_SESSION_SECRET), so a session works on all
// replicas and survives restarts.
func opsSessionKey(cfg config.Config) []byte {
	m := hmac.New(sha256.New, []byte(cfg.OpsSessionSecret))
	m.Write([]byte("bookonce ops sessions"))
	return m.Sum(nil)
}

// GatewayService builds the gateway's public service (GATEWAY_LISTEN):
// webhooks and the customers' return page, a /healthz without details,
// no /metrics.
func GatewayService(g *channels.Gateway, reg *prometheus.Registry, log *slog.Logger) web.Service {
	return web.Service{Name: "gateway", Handler: g.Handler(), Health: g.Health, Gatherer: reg, Logger: log, Public: true}
}

// AdminService builds the gateway's admin service (ADMIN_LISTEN): the
// review and booking APIs, the ops page (channels.Gateway.AdminHandler),
// /metrics and a detailed /healthz.
func AdminService(g *channels.Gateway, reg *prometheus.Registry, log *slog.Logger) web.Service {
	return web.Service{Name: "gateway-admin", Handler: g.AdminHandler(), Health: g.Health, Gatherer: reg, Logger: log}
}
