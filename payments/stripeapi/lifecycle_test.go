package stripeapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// A session past its expires_at reads as expired and emits exactly one
// checkout.session.expired, whoever notices first: a read, the page, the
// sweep, or the expire call.
func TestSessionExpiresOnce(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	ctx := context.Background()
	d := e.deliverer(c)
	notice := map[string]func(cs *stripe.CheckoutSession){
		"read": func(cs *stripe.CheckoutSession) {
			got, err := e.sc.V1CheckoutSessions.Retrieve(ctx, cs.ID, nil)
			require.NoError(t, err)
			require.Equal(t, stripe.CheckoutSessionStatusExpired, got.Status)
		},
		"page": func(cs *stripe.CheckoutSession) {
			p := e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}})
			require.Equal(t, http.StatusGone, p.status)
			require.Contains(t, p.body, "abgelaufen")
		},
		"sweep": func(*stripe.CheckoutSession) {
			_, err := d.Pass(ctx)
			require.NoError(t, err)
		},
	}
	for name, first := range notice {
		t.Run(name, func(t *testing.T) {
			cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-exp-"+name, "appointment:demo:exp-"+name, c.Now().Add(30*time.Minute)))
			require.NoError(t, err)
			c.advance(30 * time.Minute)
			first(cs)
			for _, again := range notice {
				again(cs) // every later look sees it expired and adds nothing
			}
			require.Equal(t, 1, e.count("events", "type = 'checkout.session.expired' AND object_id = $1", cs.ID))
			require.Equal(t, 0, e.count("payment_intents", "metadata->>'booking_reference' = $1", "appointment:demo:exp-"+name))
		})
	}

	cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-exp-call", "appointment:demo:exp-call", time.Time{}))
	require.NoError(t, err)
	p := &stripe.CheckoutSessionExpireParams{}
	p.SetIdempotencyKey("k-expire")
	expired, err := e.sc.V1CheckoutSessions.Expire(ctx, cs.ID, p)
	require.NoError(t, err)
	require.Equal(t, stripe.CheckoutSessionStatusExpired, expired.Status)
	p2 := &stripe.CheckoutSessionExpireParams{}
	p2.SetIdempotencyKey("k-expire-2")
	_, err = e.sc.V1CheckoutSessions.Expire(ctx, cs.ID, p2)
	var se *stripe.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)
	events := e.events(stripeapi.EventCheckoutExpired)
	require.Len(t, events, 4)
	require.Equal(t, "k-expire", events[0].Request.IdempotencyKey, "newest first: the expire call")
}

// Stripe's bounds and shapes on create: each bad request is a 400 naming
// its parameter, and writes nothing.
func TestCreateSessionBadInput(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	good := url.Values{
		"mode": {"payment"}, "success_url": {"https://example.com/ok"},
		"line_items[0][price_data][currency]": {"eur"}, "line_items[0][price_data][unit_amount]": {"2000"},
		"line_items[0][price_data][product_data][name]": {"Deposit"}, "line_items[0][quantity]": {"1"},
		"payment_intent_data[capture_method]": {"manual"}, "payment_intent_data[metadata][booking_reference]": {"r-1"},
	}
	with := func(k, v string) url.Values {
		out := url.Values{}
		for key, vs := range good {
			out[key] = vs
		}
		if v == "" {
			delete(out, k)
		} else {
			out.Set(k, v)
		}
		return out
	}
	unix := func(d time.Duration) string { return strconv.FormatInt(c.Now().Add(d).Unix(), 10) }
	cases := []struct {
		name, param, code string
		form              url.Values
	}{
		{"missing mode", "mode", "parameter_missing", with("mode", "")},
		{"subscription", "mode", "", with("mode", "subscription")},
		{"no line items", "line_items", "parameter_missing", url.Values{"mode": {"payment"}, "success_url": {"https://example.com/ok"}}},
		{"price by id", "line_items[0][price]", "resource_missing", with("line_items[0][price]", "price_123")},
		{"missing quantity", "line_items[0][quantity]", "parameter_missing", with("line_items[0][quantity]", "")},
		{"zero amount", "line_items[0][price_data][unit_amount]", "parameter_invalid_integer", with("line_items[0][price_data][unit_amount]", "0")},
		{"unknown currency", "line_items[0][price_data][currency]", "", with("line_items[0][price_data][currency]", "xyz")},
		{"gap in items", "line_items[1]", "parameter_missing", with("line_items[2][quantity]", "1")},
		{"unknown item field", "line_items[0][price_data][tax_behavior]", "parameter_unknown", with("line_items[0][price_data][tax_behavior]", "inclusive")},
		{"unknown intent field", "payment_intent_data[setup_future_usage]", "parameter_unknown", with("payment_intent_data[setup_future_usage]", "off_session")},
		{"bad capture method", "payment_intent_data[capture_method]", "", with("payment_intent_data[capture_method]", "later")},
		{"missing success_url", "success_url", "parameter_missing", with("success_url", "")},
		{"relative success_url", "success_url", "url_invalid", with("success_url", "/ok")},
		{"expires too soon", "expires_at", "", with("expires_at", unix(29*time.Minute))},
		{"expires too late", "expires_at", "", with("expires_at", unix(25*time.Hour))},
		{"french", "locale", "", with("locale", "fr")},
		{"unknown param", "customer_email_typo", "parameter_unknown", with("customer_email_typo", "a@b.c")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("/v1/checkout/sessions", "k-bad-"+strings.ReplaceAll(tc.name, " ", "-"), tc.form)
			require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
			require.Equal(t, "invalid_request_error", r.err.Type)
			require.Equal(t, tc.param, r.err.Param, r.err.Message)
			require.Equal(t, tc.code, r.err.Code, r.err.Message)
		})
	}
	require.Equal(t, 0, e.count("checkout_sessions", ""))
	ok := e.post("/v1/checkout/sessions", "k-good", good)
	require.Equal(t, http.StatusOK, ok.status, "%s", ok.body)

	// Stripe's status for a key reused with other parameters.
	reused := e.post("/v1/checkout/sessions", "k-good", with("line_items[0][quantity]", "2"))
	require.Equal(t, http.StatusBadRequest, reused.status)
	require.Equal(t, "idempotency_error", reused.err.Type)
	require.Equal(t, 1, e.count("checkout_sessions", ""))
}

// An intent created without confirm=true waits for POST .../confirm, as
// with Stripe.
func TestConfirmLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	create := func(key, pm string) *stripe.PaymentIntent {
		p := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(2000), Currency: stripe.String("eur"),
			CaptureMethod: stripe.String("manual"), Metadata: map[string]string{"booking_reference": key}}
		if pm != "" {
			p.PaymentMethod = stripe.String(pm)
		}
		p.SetIdempotencyKey(key)
		pi, err := e.sc.V1PaymentIntents.Create(ctx, p)
		require.NoError(t, err)
		return pi
	}
	confirm := func(key, id, pm string) (*stripe.PaymentIntent, error) {
		p := &stripe.PaymentIntentConfirmParams{}
		if pm != "" {
			p.PaymentMethod = stripe.String(pm)
		}
		p.SetIdempotencyKey(key)
		return e.sc.V1PaymentIntents.Confirm(ctx, id, p)
	}
	bare := create("k-bare", "")
	require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, bare.Status)
	withCard := create("k-card", "pm_card_visa")
	require.Equal(t, stripe.PaymentIntentStatusRequiresConfirmation, withCard.Status)
	require.Zero(t, e.count("events", ""), "nothing happened to money yet")

	_, err := confirm("k-c0", bare.ID, "")
	var se *stripe.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, "payment_method", se.Param)
	_, err = confirm("k-c1", bare.ID, "pm_card_chargeDeclined")
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusPaymentRequired, se.HTTPStatusCode)
	require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, se.PaymentIntent.Status)
	ok, err := confirm("k-c2", bare.ID, "pm_card_visa")
	require.NoError(t, err)
	require.Equal(t, stripe.PaymentIntentStatusRequiresCapture, ok.Status)
	own, err := confirm("k-c3", withCard.ID, "")
	require.NoError(t, err)
	require.Equal(t, stripe.PaymentIntentStatusRequiresCapture, own.Status)
	_, err = confirm("k-c4", withCard.ID, "pm_card_visa")
	require.True(t, errors.As(err, &se) && se.Code == stripe.ErrorCodePaymentIntentUnexpectedState, "%v", err)
	require.Len(t, e.events(stripeapi.EventIntentPaymentFailed), 1)
	require.Len(t, e.events(stripeapi.EventAmountCapturableUpdated), 2)
}
