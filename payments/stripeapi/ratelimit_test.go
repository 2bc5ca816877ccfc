package stripeapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/internal/web"
)

// TestAuthRateLimitIsStripeShaped: once an address has spent its budget
// of wrong keys, the payment API answers 429 in Stripe's shape (code
// rate_limit, Retry-After) to a wrong key, which stripe-go understands;
// the right key is still served.
func TestAuthRateLimitIsStripeShaped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wrong := rawClient(e.srv, "sk_test_wrong")
	var se *stripe.Error
	for i := range web.AuthFailureBurst {
		_, err := wrong.V1PaymentIntents.Retrieve(ctx, "pi_missing", nil)
		require.ErrorAs(t, err, &se)
		require.Equal(t, http.StatusUnauthorized, se.HTTPStatusCode, "failure %d", i+1)
	}
	_, err := wrong.V1PaymentIntents.Retrieve(ctx, "pi_missing", nil)
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusTooManyRequests, se.HTTPStatusCode)
	require.Equal(t, stripe.ErrorCodeRateLimit, se.Code)
	// The right key from the same address is served: a valid credential
	// is never refused for a guesser's failures.
	_, err = e.sc.V1PaymentIntents.Retrieve(ctx, "pi_missing", nil)
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.HTTPStatusCode)
	res, err := e.srv.Client().Get(e.srv.URL + "/v1/payment_intents/pi_missing")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	require.NotEmpty(t, res.Header.Get("Retry-After"))
}
