package stripeapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// Server is the payment API: a faithful, small subset of Stripe's
// PaymentIntents and Refunds on the wire (form-encoded requests with
// bracket syntax, Stripe-shaped objects and errors), so that production can
// point the same stripe-go client at api.stripe.com by changing only the
// URL and the key. Where the subset does not implement something Stripe
// does, it rejects the request loudly instead of behaving differently.
//
// Differences from Stripe, all deliberate:
//   - An Idempotency-Key is required on every POST (stripe-go always sends
//     one); the same key with another payload answers 400
//     idempotency_error, as Stripe does, and a key in flight 409.
//   - capture_method manual (deposits: authorise now, capture later) and
//     automatic/automatic_async are supported; an intent is confirmed on
//     create (confirm=true) or later (POST .../confirm).
//   - One live authorisation per metadata booking_reference and step
//     (rule 11); Stripe has no such guard.
//   - Payment methods are Stripe's test tokens (pm_card_visa, ...,
//     pm_card_chargeDeclined); there is no card network. The hosted
//     payment page of a Checkout Session (GET/POST /pay/{session}) offers
//     them as a plain HTML form, with a 3-D Secure approve/deny step for
//     pm_card_authenticationRequired.
//   - Events are recorded in the transaction of the change they report
//     and delivered to webhook endpoints by a Deliverer (see
//     docs/payment-links.md).
type Server struct {
	// AuthLimiter is the failed-authentication budget per client; nil:
	// the default, keyed on the connection's peer.
	AuthLimiter *web.AuthLimiter
	Pool        *pgxpool.Pool
	Idempotency *idempotency.Store
	// Tokens authenticates secret keys (key -> tenant); stripe-go sends
	// the key as a bearer token.
	Tokens web.TokenLookup
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// PageBaseURL is the public base URL of the hosted payment pages
	// (a Checkout Session's url); empty means the address the API was
	// called on.
	PageBaseURL string
	// Timezone is the zone the hosted page shows times in; nil means UTC.
	Timezone *time.Location
	// SearchLag, when positive, makes GET /v1/payment_intents/search lag
	// writes as Stripe's search index does: an intent created less than
	// SearchLag ago (by Now, the clock of created) is not found. Only
	// creation lags: an intent that is found shows its current state,
	// where Stripe's index may still show an older one. List and retrieve
	// stay consistent, as at Stripe. Zero: search is consistent.
	SearchLag time.Duration
	// AllowLoopbackEndpoints admits webhook endpoints on this machine's
	// loopback at creation (development: make run); the Deliverer's
	// AllowLoopback admits them at delivery.
	AllowLoopbackEndpoints bool
}

// Operation names: the idempotency scope of each mutating route.
const (
	OpCreateIntent  = "POST /v1/payment_intents"
	OpCaptureIntent = "POST /v1/payment_intents/{id}/capture"
	OpCancelIntent  = "POST /v1/payment_intents/{id}/cancel"
	OpCreateRefund  = "POST /v1/refunds"
	OpConfirmIntent = "POST /v1/payment_intents/{id}/confirm"
	OpCreateSession = "POST /v1/checkout/sessions"
	OpExpireSession = "POST /v1/checkout/sessions/{id}/expire"
	OpCreateWebhook = "POST /v1/webhook_endpoints"
	OpUpdateWebhook = "POST /v1/webhook_endpoints/{id}"
)

// Handler returns the API's routes behind secret-key authentication. Only
// the mutating routes go through the idempotency middleware: stripe-go
// sends no key on GET, and reads need none.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	idem := func(op string, h http.HandlerFunc) {
		mux.Handle(op, s.Idempotency.Middleware(op, h))
	}
	idem(OpCreateIntent, s.createIntent)
	idem(OpCaptureIntent, s.captureIntent)
	idem(OpCancelIntent, s.cancelIntent)
	idem(OpCreateRefund, s.createRefund)
	idem(OpConfirmIntent, s.confirmIntent)
	idem(OpCreateSession, s.createSession)
	idem(OpExpireSession, s.expireSession)
	idem(OpCreateWebhook, s.createWebhookEndpoint)
	idem(OpUpdateWebhook, s.updateWebhookEndpoint)
	mux.HandleFunc("GET /v1/checkout/sessions/{id}", s.getSession)
	mux.HandleFunc("GET /v1/events", s.listEvents)
	mux.HandleFunc("GET /v1/events/{id}", s.getEvent)
	mux.HandleFunc("GET /v1/payment_intents", s.listIntents)
	mux.HandleFunc("GET /v1/payment_intents/search", s.searchIntents)
	mux.HandleFunc("GET /v1/payment_intents/{id}", s.getIntent)
	mux.HandleFunc("GET /v1/refunds/{id}", s.getRefund)
	mux.HandleFunc("GET /v1/webhook_endpoints/{id}", s.getWebhookEndpoint)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(r.Context(), w, &apiError{status: http.StatusNotFound, Type: typeInvalidRequest,
			Message: "Unrecognized request URL (" + r.Method + ": " + r.URL.Path + ")."})
	})
	// The hosted payment page is the customer's, not the merchant's: no
	// secret key, the session ID in its URL is the capability.
	pages := http.NewServeMux()
	pages.HandleFunc("GET /pay/{session}", s.payPage)
	pages.HandleFunc("POST /pay/{session}", s.pay)
	pages.Handle("/", requestID(stripeAuthErrors(web.StripeKeyAuth(s.Tokens, s.AuthLimiter, mux))))
	return pages
}

// requestID sets Stripe's Request-Id on every answer, replays included
// (each attempt is its own request), so a support case can name one.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newID("req_")
		w.Header().Set("Request-Id", id)
		// Events name the request that caused them (Stripe's request.id).
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Server) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func tenantOf(r *http.Request) string {
	t, _ := web.Tenant(r.Context())
	return t
}

// readForm reads a POST body (buffered and size-limited by the idempotency
// middleware) and binds it to spec. A non-empty body must be form-encoded:
// Stripe's v1 API takes nothing else, and a JSON body must not be read as
// "no parameters".
func readForm(r *http.Request, spec formSpec) (form, *apiError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, idempotency.MaxBodyBytes))
	if err != nil {
		return form{}, invalidRequest("", "", "read request body: "+err.Error())
	}
	if len(body) > 0 {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "application/x-www-form-urlencoded" {
			return form{}, invalidRequest("", "", "send parameters as application/x-www-form-urlencoded")
		}
	}
	return parseRequestForm(string(body), spec)
}

// readQuery binds a GET request's query string to spec.
func readQuery(r *http.Request, spec formSpec) (form, *apiError) {
	return parseRequestForm(r.URL.RawQuery, spec)
}

var errNoTx = errors.New("no idempotency transaction on a mutating route")

// txOf returns the request's idempotency transaction. A mutating handler
// without one is a wiring bug; it answers 500 and writes nothing.
func (s *Server) txOf(w http.ResponseWriter, r *http.Request) (pgx.Tx, bool) {
	tx, ok := idempotency.Tx(r.Context())
	if !ok {
		s.internalError(w, r, r.Method+" "+r.URL.Path, errNoTx)
		return nil, false
	}
	return tx, true
}

// answerIntent writes an intent and records it on the key, so an operator
// can reconcile a key to the intent it created or changed.
func answerIntent(ctx context.Context, w http.ResponseWriter, row intentRow, expandCharge bool) {
	idempotency.SetResource(ctx, "payment_intent", row.ID)
	writeJSON(w, http.StatusOK, row.object(expandCharge))
}
