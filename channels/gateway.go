// Package channels is where customers reach bookonce: the webhook gateway
// for Twilio voice and WhatsApp, and the payment provider's webhooks that
// tell a payment saga how its link went. Every delivery is verified,
// recorded in the inbox before any effect, and handed to its workflow (the
// customer's conversation, or the booking's payment); a redelivery is
// dropped at the edge.
package channels

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	twclient "github.com/twilio/twilio-go/client"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
)

// Gateway serves the channel webhooks on its public listener (Handler)
// and the review API, the booking API (cancel, reschedule, no-show) and
// the ops page on its admin listener (AdminHandler).
type Gateway struct {
	// AuthLimiter is the failed-authentication budget the gateway's doors
	// share (its API, the agent tools, the ops page); nil: one of its own.
	AuthLimiter *web.AuthLimiter
	Pool        *pgxpool.Pool
	Temporal    client.Client
	TaskQueue   string
	// Tenants routes every webhook to the tenant owning its To number and
	// gives each conversation its tenant's terms; reload it (Run) and a
	// new number or tenant is answered without a restart.
	Tenants *tenants.Registry
	// TwilioAuthToken verifies X-Twilio-Signature; PublicBaseURL is the URL
	// Twilio signed (never the Host header, which a proxy may rewrite).
	TwilioAuthToken string
	PublicBaseURL   string
	// StripeWebhookSecret (whsec_…) verifies the payment provider's
	// webhooks on RouteStripe (STRIPE_WEBHOOK_SECRET); empty: they are
	// refused.
	StripeWebhookSecret string
	// StripeTenantSecrets (tenant -> whsec_…, STRIPE_WEBHOOK_SECRETS)
	// verify RouteStripeTenant, each tenant's own Stripe account's
	// endpoint; RouteStripe takes no event for these tenants. Never logged.
	StripeTenantSecrets map[string]string
	// Keys computes the customer keys in conversation IDs
	// (BOOKONCE_CUSTOMER_ID_KEY); nil: the development key, as in tests.
	Keys *customerid.Keyer
	// Region is the default region for numbers without a country code.
	Region string
	// VoiceConfirmWait is how long a caller whose wish is being booked
	// stays on the line for the outcome (VOICE_CONFIRM_WAIT); 0:
	// DefaultVoiceConfirmWait.
	VoiceConfirmWait time.Duration
	// PaymentMethod pays the deposits of bookings started from
	// conversations (the deposit itself is the service's, per tenant).
	PaymentMethod string
	// Tokens authenticate the review API (the tenants registry).
	Tokens web.TokenLookup
	// Reviews lists and resolves review cases for the review API.
	Reviews *review.Resolver
	// Outbox records the delivery statuses of outbound messages.
	Outbox *outbox.Store
	// Sealer encrypts the inbox's Twilio payloads at rest (message texts,
	// numbers): the payload key set. Nil stores them in clear, as without
	// BOOKONCE_PAYLOAD_KEYS.
	Sealer *payloadcrypt.Codec
	// Ops is the ops page (review queue, duplicate counters), served at
	// /ops on the admin listener.
	Ops http.Handler
	// Webhooks holds more public routes (ServeMux pattern -> handler):
	// the shops' calendars' push notifications (shopcal.Receiver).
	Webhooks map[string]http.Handler
	// Admin holds more staff routes (ServeMux pattern -> handler) for the
	// admin listener, beside the review and booking APIs and the ops page.
	Admin   map[string]http.Handler
	Metrics *Metrics
	Logger  *slog.Logger
	Now     func() time.Time
}

func (g *Gateway) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gateway) keys() *customerid.Keyer {
	if g.Keys != nil {
		return g.Keys
	}
	return customerid.Dev()
}

// requestStartKey keys the moment a signed webhook's request began (see
// signed): the event's ReceivedAt, from which a booking's phases count.
type requestStartKey struct{}

// requestStart is when r began, or now for a request signed did not see.
func (g *Gateway) requestStart(r *http.Request) time.Time {
	if t, ok := r.Context().Value(requestStartKey{}).(time.Time); ok {
		return t
	}
	return g.now()
}

func (g *Gateway) log() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

// Routes of the gateway.
const (
	RouteWhatsApp    = "/webhooks/twilio/whatsapp"
	RouteVoice       = "/webhooks/twilio/voice"
	RouteVoiceGather = "/webhooks/twilio/voice/gather"
	// RouteVoiceStatus is where a caller waiting for the booking is
	// redirected to, once a second, until its outcome can be said.
	RouteVoiceStatus = "/webhooks/twilio/voice/status"
	RouteStatus      = "/webhooks/twilio/status"
	// RouteStripe receives the payment provider's signed webhooks.
	RouteStripe = "/webhooks/stripe"
	// RouteStripeTenant receives the webhooks of one tenant's own Stripe
	// account, signed with its secret (StripeTenantSecrets).
	RouteStripeTenant = RouteStripe + "/{tenant}"
	// RoutePaid is where the hosted payment page sends the customer back
	// (a Checkout Session's success_url): a plain "thank you" page.
	RoutePaid = "/paid"
)

// Handler returns the gateway's public routes, served on GATEWAY_LISTEN
// where Twilio and the payment provider call: the signed webhooks and the
// page customers return to after paying. Nothing else: the staff's
// surface is AdminHandler, on its own listener.
func (g *Gateway) Handler() http.Handler {
	g.ensureMetrics()
	mux := http.NewServeMux()
	mux.Handle("POST "+RouteWhatsApp, g.signed(RouteWhatsApp, g.whatsapp))
	mux.Handle("POST "+RouteSMS, g.signed(RouteSMS, g.sms))
	mux.Handle("POST "+RouteVoice, g.signed(RouteVoice, g.voice))
	mux.Handle("POST "+RouteVoiceGather, g.signed(RouteVoiceGather, g.voiceGather))
	mux.Handle("POST "+RouteVoiceRelay, g.signed(RouteVoiceRelay, g.voiceRelay))
	mux.Handle("GET "+RouteVoiceRelaySocket, g.relaySigned(g.voiceRelaySocket))
	mux.Handle("POST "+RouteVoiceStatus, g.signed(RouteVoiceStatus, g.voiceStatus))
	mux.Handle("POST "+RouteStatus, g.signed(RouteStatus, g.status))
	mux.HandleFunc("POST "+RouteStripe, g.stripeWebhook)
	mux.HandleFunc("POST "+RouteStripeTenant, g.tenantStripeWebhook)
	mux.HandleFunc("GET "+RoutePaid, paidPage)
	for pattern, h := range g.Webhooks {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("/", notFound)
	return mux
}

// AdminHandler returns the staff's routes, served on ADMIN_LISTEN (in the
// gateway process, loopback by default): the review API, the booking API
// (cancel, reschedule, no-show) and the ops page. /metrics and /healthz
// come with the service (stack.AdminService). It is the one place the
// admin surface is built: a new staff endpoint is one more line here.
func (g *Gateway) AdminHandler() http.Handler {
	g.ensureMetrics()
	mux := http.NewServeMux()
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/review-cases", g.listCases)
	api.HandleFunc("POST /v1/review-cases/{id}/resolve", g.resolveCase)
	api.HandleFunc(RouteCancelAppointment, g.cancelAppointment)
	api.HandleFunc(RouteNoShowAppointment, g.noShowAppointment)
	api.HandleFunc(RouteRescheduleAppointment, g.rescheduleAppointment)
	mux.Handle("/v1/", web.BearerAuthLimited(g.Tokens, g.AuthLimiter, api))
	if g.Ops != nil {
		mux.Handle("/ops", g.Ops)
		mux.Handle("/ops/", g.Ops)
	}
	for pattern, h := range g.Admin {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("/", notFound)
	return mux
}

func (g *Gateway) ensureMetrics() {
	if g.Metrics == nil {
		g.Metrics = NewMetrics(nil)
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no route "+r.Method+" "+r.URL.Path))
}

// signed verifies Twilio's signature over PUBLIC_BASE_URL + the request
// URI and the POST form, before anything is parsed further or written.
func (g *Gateway) signed(route string, next http.HandlerFunc) http.Handler {
	validator := twclient.NewRequestValidator(g.TwilioAuthToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), requestStartKey{}, g.now()))
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			g.Metrics.rejected.WithLabelValues(route, "malformed").Inc()
			http.Error(w, "malformed form", http.StatusBadRequest)
			return
		}
		params := make(map[string]string, len(r.PostForm))
		for k, v := range r.PostForm {
			if len(v) > 0 {
				params[k] = v[0]
			}
		}
		sig := r.Header.Get("X-Twilio-Signature")
		if sig == "" || !validator.Validate(g.PublicBaseURL+r.URL.RequestURI(), params, sig) {
			g.Metrics.rejected.WithLabelValues(route, "signature").Inc()
			g.log().Warn("webhook with a missing or wrong signature", "route", route)
			http.Error(w, "invalid signature", http.StatusForbidden)
			return
		}
		next(w, r)
	})
}

// Health reports whether PostgreSQL and Temporal answer: without either,
// no webhook can be accepted safely.
func (g *Gateway) Health(ctx context.Context) error {
	if err := g.Pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if _, err := g.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	return nil
}

// Metrics are the gateway's counters.
type Metrics struct {
	duplicates *prometheus.CounterVec
	rejected   *prometheus.CounterVec
	accepted   *prometheus.CounterVec
	unroutable *prometheus.CounterVec
	repaired   *prometheus.CounterVec
	// unconfigured counts deliveries to a number no tenant owns.
	unconfigured *prometheus.CounterVec
	// unmatched counts payment events no running payment workflow took.
	unmatched *prometheus.CounterVec
	// voice counts what callers waiting for their booking were told.
	voice *prometheus.CounterVec
	// phases is bookonce_booking_phase_seconds of the gateway: phase
	// accepted (request start until the inbox row committed).
	phases *prometheus.HistogramVec
}

// VoiceOutcomes is the counter of what callers waiting on the line for
// their booking were told, by outcome (VoiceOutcome…).
func (m *Metrics) VoiceOutcomes() *prometheus.CounterVec { return m.voice }

// PaymentWebhooksUnmatched is the counter of payment webhooks that matched
// no running payment workflow, by event type.
func (m *Metrics) PaymentWebhooksUnmatched() *prometheus.CounterVec { return m.unmatched }

// DuplicatesBlocked is the counter of duplicates blocked at the edge.
func (m *Metrics) DuplicatesBlocked() *prometheus.CounterVec { return m.duplicates }

// UnconfiguredNumbers is the counter of webhooks to a number no tenant
// owns, by channel.
func (m *Metrics) UnconfiguredNumbers() *prometheus.CounterVec { return m.unconfigured }

// NewMetrics creates the counters and registers them on reg (if non-nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_duplicates_blocked_total",
			Help: "Duplicates blocked, by layer (inbox here), tenant and route: the early warning that infrastructure redelivers.",
		}, []string{"layer", "tenant", "route"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_webhooks_rejected_total", Help: "Webhooks rejected before the inbox, by route and reason.",
		}, []string{"route", "reason"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_webhooks_accepted_total", Help: "Webhooks recorded in the inbox, by route.",
		}, []string{"route"}),
		unroutable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_webhooks_unroutable_total",
			Help: "Signed webhooks recorded and answered but handed to no conversation (no caller number, no delivery ID), by channel and reason.",
		}, []string{"channel", "reason"}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_webhooks_repaired_total",
			Help: "Signed webhooks handed on after a repair (raw E.164 kept, text sanitised for storage), by channel and reason.",
		}, []string{"channel", "reason"}),
		unconfigured: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_webhooks_unconfigured_number_total",
			Help: "Signed webhooks to a Twilio number no tenant owns (tenants.yaml twilio_numbers): recorded, answered politely, nothing booked; by channel.",
		}, []string{"channel"}),
		unmatched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_payment_webhooks_unmatched_total",
			Help: "Verified payment webhooks whose payment workflow does not exist (closed, or never started): recorded as unmatched, answered, listed on the ops page; by event type.",
		}, []string{"type"}),
		voice: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bookonce_voice_outcomes_total",
			Help: "What callers waiting on the line for their booking were told: confirmed, already_booked, not_booked, in_review, reply (the conversation's answer), follows (the written confirmation follows).",
		}, []string{"outcome"}),
		phases: telemetry.NewBookingPhases(),
	}
	if reg != nil {
		reg.MustRegister(m.duplicates, m.rejected, m.accepted, m.unroutable, m.repaired, m.unconfigured, m.unmatched, m.voice, m.phases)
	}
	return m
}
