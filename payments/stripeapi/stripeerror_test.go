package stripeapi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
)

// stripeErrorViolations is where an error answer departs from Stripe's
// error object ("error" in Stripe's definition: {"error": api_errors}
// alone, a type Stripe has, only fields Stripe's error has, of their
// kinds, the required ones present); nil without the definition.
func stripeErrorViolations(body []byte) ([]string, error) {
	schemas, err := testsupport.LoadStripeSchemas()
	if err != nil {
		return nil, nil // no definition on this machine: TestErrorsAreStripesShape says so
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return stripeSchemas(schemas).violations("error", v), nil
}

// requireStripeError checks an error answer against Stripe's definition.
// Every error the payment API's tests provoke goes through it (env.do).
func requireStripeError(t testing.TB, body []byte) {
	t.Helper()
	viol, err := stripeErrorViolations(body)
	require.NoError(t, err, "%s", body)
	require.Empty(t, viol, "not Stripe's error object: %s", body)
}

// TestErrorsAreStripesShape: the shape is read from Stripe's definition,
// and a body Stripe would not send is refused by the check, so the check
// that every other test's errors pass through can fail.
func TestErrorsAreStripesShape(t *testing.T) {
	schemas := testsupport.StripeSchemas(t) // skips, saying why, without the definition
	var apiErrors struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(schemas["api_errors"], &apiErrors))
	require.ElementsMatch(t, []string{"api_error", "card_error", "idempotency_error", "invalid_request_error"}, apiErrors.Properties.Type.Enum)
	requireStripeError(t, []byte(`{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline","message":"Your card was declined.",`+
		`"payment_intent":{"id":"pi_1","object":"payment_intent","created":1,"livemode":false,"status":"requires_payment_method"}}}`))
	for _, bad := range []string{
		`{"error":{"type":"payment_error","message":"m"}}`,
		`{"error":{"type":"invalid_request_error","message":"m","field":"amount"}}`,
		`{"error":{"type":"invalid_request_error","message":"m"},"status":400}`,
		`{"error":{"message":"m"}}`,
		`{"error":{"type":"card_error","message":"m","payment_intent":"pi_1"}}`,
	} {
		viol, err := stripeErrorViolations([]byte(bad))
		require.NoError(t, err)
		require.NotEmpty(t, viol, "the check let through %s", bad)
	}
}
