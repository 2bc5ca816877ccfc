package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// Dial connects to the Temporal cluster named by the configuration;
// options add, for example, the SDK metrics (WithMetrics). It fails at
// once when Temporal does not answer (a command-line call). With payload
// keys configured, the client and every worker built on it encrypt
// payloads and failure texts (payloadcrypt).
func Dial(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...DialOption) (client.Client, error) {
	return DialPatiently(ctx, cfg, log, 0, opts...)
}

// DialPatiently is Dial for long-running processes: a worker or gateway
// that starts while Temporal restarts (a rolling deploy, a crash) waits
// up to patience for it instead of exiting.
func DialPatiently(ctx context.Context, cfg config.Config, log *slog.Logger, patience time.Duration, opts ...DialOption) (client.Client, error) {
	o := cfg.TemporalOptions() // TLS and credentials too, never logged
	o.Logger = sdklog.NewStructuredLogger(log.With("component", "temporal-sdk"))
	if err := EncryptPayloads(cfg)(&o, log); err != nil {
		return nil, err
	}
	// Traces cross Temporal on every client, and on every worker built on
	// one (none when tracing is off).
	traced, err := tracing.TemporalInterceptors()
	if err != nil {
		return nil, err
	}
	o.Interceptors = append(o.Interceptors, traced...)
	for _, opt := range opts {
		if err := opt(&o, log); err != nil {
			return nil, err
		}
	}
	deadline, wait := time.Now().Add(patience), 200*time.Millisecond
	for {
		c, err := client.DialContext(ctx, o)
		if err == nil {
			return c, nil
		}
		err = fmt.Errorf("connect to Temporal at %s (namespace %s): %w", cfg.TemporalAddress, cfg.TemporalNamespace, err)
		if time.Now().Add(wait).After(deadline) {
			return nil, err
		}
		log.Warn("Temporal not reachable yet; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// NewActivities wires the activities to the configured APIs, the outbox,
// the review queue and the tenants (catalogue, time zone and terms of
// each message's tenant). The worker calls the APIs for the booking's
// tenant with a service token it mints (BOOKONCE_SERVICE_KEY), or the
// payment provider with STRIPE_SECRET_KEY. With a Temporal client c,
// conversations move from their legacy IDs and a wish never merges into a
// booking that is over, even when its CloseIntent was lost or it was
// terminated, and follows a moved booking to its new slot; c is nil only
// where no workflow runs (reading a tenant's payment gateway).
func NewActivities(cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry, c client.Client) *activities.Activities {
	acts := newActivities(cfg, pool, tenants)
	if c != nil {
		acts.Temporal = c
		acts.Understanding.Dedup.Target = DedupTarget(c)
	}
	return acts
}

func newActivities(cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry) *activities.Activities {
	// The worker acts for a tenant with a token it mints itself, per call,
	// for that tenant and API (package servicetoken): it holds no shop's
	// token, and a shop applied while it runs is served at once.
	minter := cfg.ServiceMinter()
	acts := &activities.Activities{
		Calendar: func(tenant string) (*calendar.Client, error) {
			tok, err := minter.Mint(tenant, servicetoken.Calendar)
			if err != nil {
				return nil, err
			}
			return calendar.NewClient(cfg.CalendarURL, tok), nil
		},
		Payments: func(tenant string) (payments.Gateway, error) {
			tok, err := cfg.StripeKeyFor(tenant) // the shop's own Stripe account, or the shared one
			if err != nil {
				return nil, err
			}
			if tok == "" {
				if tok, err = minter.Mint(tenant, servicetoken.Payments); err != nil {
					return nil, err
				}
			}
			return payments.NewStripeGateway(cfg.PaymentsURL, tok, &http.Client{Timeout: 10 * time.Second, Transport: tracing.Transport(nil)}).
				WithAuthoritativeLookup(cfg.PaymentsAuthoritativeLookup), nil
		},
		Messages: activities.OutboxMessenger{Store: &outbox.Store{Pool: pool, Sealer: cfg.PayloadCodec}},
		Reviews:  &review.Store{Pool: pool},
		Consent:  ConsentStore(cfg, pool),
		// Bookings go into the shops' own calendars where configured.
		ShopCalendars: ShopCalendars(cfg, tenants),
		// The payment link's page sends a payer to the gateway's paid page.
		PaymentReturnURL: strings.TrimRight(cfg.PublicBaseURL, "/") + channels.RoutePaid,
		Understanding: activities.Understanding{
			Extractor: extractor(cfg),
			Tenants:   tenants.Get,
			Location:  cfg.Timezone,
			Dedup:     &dedup.Store{Pool: pool, Window: cfg.DedupWindow, Retention: cfg.IdempotencyTTL, Location: cfg.Timezone},
			// REMINDER_LEAD reaches the booking lifecycle in the terms.
			ReminderLead: cfg.ReminderLead,
			// So does PAYMENT_DECISION_TIMEOUT, to the payment saga.
			DecisionTimeout: cfg.PaymentDecisionTimeout,
		},
	}
	// What staff enter in those calendars blocks the slot.
	acts.ShopMirror = ShopMirror(cfg, pool, tenants, acts, slog.Default())
	return acts
}

// Register adds every workflow and activity to a worker.
func Register(r worker.Registry, acts *activities.Activities) {
	appointment.Register(r)
	deposit.Register(r)
	conversation.Register(r)
	lifecycle.Register(r)
	r.RegisterActivity(acts)
}

// Worker creates the bookonce worker on the configured task queue, with
// interceptors added to its workflows and activities. It returns the
// activities too: the worker process runs their mirror of the shops'
// calendars.
func Worker(c client.Client, cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry, interceptors ...interceptor.WorkerInterceptor) (worker.Worker, *activities.Activities) {
	opts := WorkerOptions(cfg)
	opts.Interceptors = append(opts.Interceptors, interceptors...)
	w := worker.New(c, cfg.TaskQueue, opts)
	acts := NewActivities(cfg, pool, tenants, c)
	Register(w, acts)
	reconciler.Register(w, NewReconciler(acts, c, tenants))
	return w, acts
}

// DedupTarget reads, for dedup, the booking an intent points to
// (workflows.BookingTarget) from c.
func DedupTarget(c client.Client) func(context.Context, string) (dedup.Target, error) {
	return func(ctx context.Context, workflowID string) (dedup.Target, error) {
		return workflows.BookingTarget(ctx, c, workflowID)
	}
}

// extractor understands messages: the deterministic rules, or a model
// when one is configured (which falls back to the rules when it fails).
func extractor(cfg config.Config) intent.Extractor {
	if cfg.LLMBaseURL == "" {
		return intent.Rules{}
	}
	return intent.LLM{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel}
}
