package payments_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
)

// The gateway classifies every failure at the boundary: what may have
// happened is Unknown, what decided nothing is Retryable, a decision Final.
func TestGatewayClassifiesOutcomes(t *testing.T) {
	t.Parallel()
	stripeErr := func(status int, typ, code string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"type":"` + typ + `","code":"` + code + `","message":"m"}}`))
		}
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    outcome.Outcome
		status  int
	}{
		{"bad gateway from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		}, outcome.Unknown, 0},
		{"503", stripeErr(503, "api_error", ""), outcome.Unknown, 503},
		{"504", stripeErr(504, "api_error", ""), outcome.Unknown, 504},
		{"500", stripeErr(500, "api_error", ""), outcome.Retryable, 500},
		{"key in flight", stripeErr(409, "idempotency_error", "idempotency_key_in_use"), outcome.Retryable, 409},
		{"rate limited", stripeErr(429, "invalid_request_error", "rate_limit"), outcome.Retryable, 429},
		{"declined", stripeErr(402, "card_error", "card_declined"), outcome.Final, 402},
		// The payment API answers 400 since payment links (Stripe's status).
		{"key reused", stripeErr(400, "idempotency_error", "idempotency_key_reused"), outcome.Final, 400},
		{"bad key", stripeErr(401, "invalid_request_error", ""), outcome.Final, 401},
		{"connection dropped", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, outcome.Unknown, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.handler)
			defer ts.Close()
			gw := payments.NewStripeGateway(ts.URL, "sk_test_x", ts.Client())
			_, err := gw.Authorize(context.Background(), "key-1", payments.Authorization{Amount: 5000, Currency: "eur", Reference: "wf-x", Step: "deposit", PaymentMethod: "pm_card_visa"})
			require.Error(t, err)
			require.Equal(t, tc.want, outcome.Of(err), "%v", err)
			var pe *payments.Error
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.status, pe.Status)
			require.Equal(t, "authorize", pe.Op)
		})
	}

	// A timeout is an unknown, not a failure. The handler holds the request
	// until the client gives up, then is released by the test.
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	gw := payments.NewStripeGateway(ts.URL, "sk_test_x", ts.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := gw.Capture(ctx, "key-1", "pi_x")
	require.Equal(t, outcome.Unknown, outcome.Of(err))
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)

	require.Equal(t, outcome.Unknown, outcome.Of(errors.New("foreign")))
	require.Equal(t, outcome.Outcome(0), outcome.Of(nil))
	require.Equal(t, "", payments.CodeOf(errors.New("foreign")))
}
