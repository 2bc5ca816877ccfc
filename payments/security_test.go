package payments_test

// Attacks on the payment API by another tenant (docs/security.md).

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"
)

// TestForeignBookingReferenceIsRefused: a booking_reference leads
// webhooks, the reconciler and lookups to a workflow, so the demo tenant
// may store one in its own namespace or outside bookonce's, never in
// another tenant's: the PaymentIntent and the Checkout Session (its own
// metadata and its intent's) are refused with Stripe's invalid_request
// error naming the parameter, and nothing is written. Before, both were
// accepted.
func TestForeignBookingReferenceIsRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct {
		ref string
		ok  bool
	}{
		{"appointment:demo:mine", true},
		{"front-desk-42", true},
		{"appointment:other:theirs", false},
		{"appointment:other:theirs#move-1", false},
		{"booking:appointment:other:theirs", false},
	} {
		t.Run(c.ref, func(t *testing.T) {
			before := e.count("payment_intents", "")
			r := e.post("/v1/payment_intents", "k-"+c.ref, authorizeForm(c.ref, "5000"))
			sessions := e.count("checkout_sessions", "")
			_, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("cs-"+c.ref, c.ref, time.Time{}))
			if c.ok {
				require.Equal(t, http.StatusOK, r.status, string(r.body))
				require.NoError(t, err)
				return
			}
			require.Equal(t, http.StatusBadRequest, r.status)
			require.Equal(t, "invalid_request_error", r.err.Type)
			require.Equal(t, "metadata[booking_reference]", r.err.Param)
			require.Equal(t, before, e.count("payment_intents", ""), "no intent written")
			var se *stripe.Error
			require.True(t, errors.As(err, &se), "%v", err)
			require.Equal(t, stripe.ErrorTypeInvalidRequest, se.Type)
			require.Equal(t, sessions, e.count("checkout_sessions", ""), "no session written")
		})
	}
}

// TestHostedPageCannotBeFramedOrLeakItsURL: the pay page is served with
// frame-ancestors 'none' (browsers honour it over X-Frame-Options) and
// Referrer-Policy no-referrer: its URL carries the session ID.
func TestHostedPageCannotBeFramedOrLeakItsURL(t *testing.T) {
	e := newEnv(t)
	cs, err := e.sc.V1CheckoutSessions.Create(context.Background(), sessionParams("cs-headers", "appointment:demo:headers", time.Time{}))
	require.NoError(t, err)
	res, err := e.srv.Client().Get(cs.URL)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"))
}
