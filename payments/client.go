package payments

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
)

// StripeGateway is the Gateway on stripe-go: against this package's Server
// in development and tests, against api.stripe.com in production. Only the
// base URL and the secret key differ.
type StripeGateway struct {
	client *stripe.Client
	// authoritative: see AuthoritativeLookup.
	authoritative bool
}

var _ Gateway = (*StripeGateway)(nil)

// DefaultTimeout bounds one HTTP attempt when NewStripeGateway is given no
// client. A timeout is an Unknown outcome, never a failure.
const DefaultTimeout = 30 * time.Second

// NewStripeGateway returns a gateway that calls baseURL ("" means
// https://api.stripe.com) with secretKey, over httpClient (nil means one
// with DefaultTimeout).
//
// stripe-go's own network retries are switched off: retries belong to
// Temporal, which repeats the activity with the same idempotency key, and
// a hidden retry loop inside one attempt would only stretch its timeout.
// stripe-go's logging is off too: every failure comes back as *Error and
// the caller logs it once, with its workflow context.
func NewStripeGateway(baseURL, secretKey string, httpClient *http.Client) *StripeGateway {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultTimeout, Transport: tracing.Transport(nil)}
	}
	cfg := &stripe.BackendConfig{
		HTTPClient:        httpClient,
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if baseURL != "" {
		cfg.URL = stripe.String(strings.TrimRight(baseURL, "/"))
	}
	return &StripeGateway{client: stripe.NewClient(secretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))}
}

// WithAuthoritativeLookup declares that the API behind the gateway answers
// searches from its own tables (our payment API), so FindByReference's
// "not found" is proof of absence. A new gateway assumes the opposite, as
// is right for Stripe: the safe default.
func (g *StripeGateway) WithAuthoritativeLookup(authoritative bool) *StripeGateway {
	g.authoritative = authoritative
	return g
}

// AuthoritativeLookup reports what WithAuthoritativeLookup declared; false
// by default.
func (g *StripeGateway) AuthoritativeLookup() bool { return g.authoritative }

// checkKey refuses a call without a usable key before anything is sent:
// stripe-go would otherwise invent a random key per attempt, which is no
// key at all (rule 1).
func checkKey(op, key string) error {
	if key == "" || len(key) > 255 || strings.TrimSpace(key) != key {
		return &Error{Op: op, Type: "idempotency_error", Code: "idempotency_key_invalid", Outcome: outcome.Final,
			Message: "the gateway needs the caller's idempotency key (1-255 bytes, no surrounding spaces)"}
	}
	return nil
}

// Authorize creates and confirms a manual-capture PaymentIntent.
func (g *StripeGateway) Authorize(ctx context.Context, key string, a Authorization) (Intent, error) {
	const op = "authorize"
	if err := checkKey(op, key); err != nil {
		return Intent{}, err
	}
	p := &stripe.PaymentIntentCreateParams{
		Amount:        stripe.Int64(a.Amount),
		Currency:      stripe.String(a.Currency),
		CaptureMethod: stripe.String(string(stripe.PaymentIntentCaptureMethodManual)),
		Confirm:       stripe.Bool(true),
		PaymentMethod: stripe.String(a.PaymentMethod),
		Metadata:      map[string]string{MetadataReference: a.Reference},
	}
	if a.Step != "" {
		p.Metadata[MetadataStep] = a.Step
	}
	if a.Customer != "" {
		p.Customer = stripe.String(a.Customer)
	}
	if a.Description != "" {
		p.Description = stripe.String(a.Description)
	}
	p.AddExpand("latest_charge")
	p.SetIdempotencyKey(key)
	pi, err := g.client.V1PaymentIntents.Create(ctx, p)
	if err != nil {
		return Intent{}, classify(op, err)
	}
	return intentFrom(pi), nil
}

// Capture captures the full authorised amount. "Already succeeded" is
// success: a retry with a new key (a reset workflow) or after a lost
// response must not fail a step whose effect exists.
func (g *StripeGateway) Capture(ctx context.Context, key, intentID string) (Intent, error) {
	const op = "capture"
	if err := checkKey(op, key); err != nil {
		return Intent{}, err
	}
	p := &stripe.PaymentIntentCaptureParams{}
	p.AddExpand("latest_charge")
	p.SetIdempotencyKey(key)
	pi, err := g.client.V1PaymentIntents.Capture(ctx, intentID, p)
	if err != nil {
		if inState(err, stripe.PaymentIntentStatusSucceeded) {
			return g.current(ctx, op, intentID)
		}
		return Intent{}, classify(op, err)
	}
	return intentFrom(pi), nil
}

// Void cancels an authorisation. "Already canceled" is success, so the
// compensation is idempotent across keys (rule 9).
func (g *StripeGateway) Void(ctx context.Context, key, intentID string) (Intent, error) {
	const op = "void"
	if err := checkKey(op, key); err != nil {
		return Intent{}, err
	}
	p := &stripe.PaymentIntentCancelParams{}
	p.AddExpand("latest_charge")
	p.SetIdempotencyKey(key)
	pi, err := g.client.V1PaymentIntents.Cancel(ctx, intentID, p)
	if err != nil {
		if inState(err, stripe.PaymentIntentStatusCanceled) {
			return g.current(ctx, op, intentID)
		}
		return Intent{}, classify(op, err)
	}
	return intentFrom(pi), nil
}

// Refund refunds amount (0: everything not refunded yet) of a captured
// intent. The same key never refunds twice. A different key for the same
// refund is bounded only by the captured total (charge_already_refunded or
// amount_too_large, Final), so callers keep one key per refund decision.
func (g *StripeGateway) Refund(ctx context.Context, key, intentID string, amount int64) (Refund, error) {
	const op = "refund"
	if err := checkKey(op, key); err != nil {
		return Refund{}, err
	}
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(intentID)}
	if amount > 0 {
		p.Amount = stripe.Int64(amount)
	}
	p.SetIdempotencyKey(key)
	re, err := g.client.V1Refunds.Create(ctx, p)
	if err != nil {
		return Refund{}, classify(op, err)
	}
	return Refund{ID: re.ID, Status: string(re.Status), Amount: re.Amount}, nil
}

// FindByReference searches by metadata. Against real Stripe the search
// index lags writes (usually under a minute, during incidents longer), so
// "not found" right after an unknown outcome is no proof of absence: retry
// the original call with its key first, and hand a lasting unknown to a
// human (rule 7).
func (g *StripeGateway) FindByReference(ctx context.Context, reference, step string) (Intent, bool, error) {
	const op = "find by reference"
	q := "metadata['" + MetadataReference + "']:'" + escapeSearch(reference) + "'"
	if step != "" {
		q += " AND metadata['" + MetadataStep + "']:'" + escapeSearch(step) + "'"
	}
	p := &stripe.PaymentIntentSearchParams{}
	p.Query = q
	p.Limit = stripe.Int64(100)
	p.AddExpand("data.latest_charge")
	var best *stripe.PaymentIntent
	n := 0
	for pi, err := range g.client.V1PaymentIntents.Search(ctx, p) {
		if err != nil {
			return Intent{}, false, classify(op, err)
		}
		if pi.Metadata[MetadataStep] != step || pi.Metadata[MetadataReference] != reference {
			continue // an empty step must not match another step's intent
		}
		if live(pi) {
			return intentFrom(pi), true, nil // at most one per step (rule 11)
		}
		if best == nil || pi.Created > best.Created {
			best = pi
		}
		if n++; n >= 1000 {
			break // a booking step with a thousand attempts is a bug; stop
		}
	}
	if best == nil {
		return Intent{}, false, nil
	}
	return intentFrom(best), true, nil
}

// current reads an intent whose state made a call redundant, so that the
// caller gets the complete current state rather than the error's copy.
func (g *StripeGateway) current(ctx context.Context, op, intentID string) (Intent, error) {
	p := &stripe.PaymentIntentRetrieveParams{}
	p.AddExpand("latest_charge")
	pi, err := g.client.V1PaymentIntents.Retrieve(ctx, intentID, p)
	if err != nil {
		return Intent{}, classify(op, err)
	}
	return intentFrom(pi), nil
}

func live(pi *stripe.PaymentIntent) bool {
	return pi.Status == stripe.PaymentIntentStatusRequiresCapture || pi.Status == stripe.PaymentIntentStatusSucceeded
}

// inState reports whether err is payment_intent_unexpected_state with the
// intent already in status.
func inState(err error, status stripe.PaymentIntentStatus) bool {
	var se *stripe.Error
	return errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState &&
		se.PaymentIntent != nil && se.PaymentIntent.Status == status
}

// intentFrom maps Stripe's PaymentIntent. Refunds live on the charge, whose
// amount_refunded also counts a released, never captured remainder; only
// refunds of captured money are the app's AmountRefunded.
func intentFrom(pi *stripe.PaymentIntent) Intent {
	in := Intent{
		ID: pi.ID, Status: string(pi.Status), Amount: pi.Amount, AmountCaptured: pi.AmountReceived,
		Currency: string(pi.Currency), Reference: pi.Metadata[MetadataReference], Step: pi.Metadata[MetadataStep],
		Created: time.Unix(pi.Created, 0).UTC(),
	}
	if ch := pi.LatestCharge; ch != nil && ch.Captured {
		in.AmountRefunded = ch.AmountRefunded - (ch.Amount - ch.AmountCaptured)
	}
	return in
}

// classify turns a stripe-go error into *Error. No response (transport
// error, timeout, undecodable body) is Unknown.
func classify(op string, err error) error {
	var se *stripe.Error
	if errors.As(err, &se) {
		return &Error{
			Op: op, Status: se.HTTPStatusCode, Type: string(se.Type), Code: string(se.Code),
			DeclineCode: string(se.DeclineCode), Param: se.Param, Message: se.Msg,
			Outcome: outcomeForStatus(se.HTTPStatusCode), Err: err,
		}
	}
	return &Error{Op: op, Message: err.Error(), Outcome: outcome.Unknown, Err: err}
}

// escapeSearch quotes a value for Stripe's search language.
func escapeSearch(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}
