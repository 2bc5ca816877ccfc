package stripeapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input gets Stripe's error shape and status, and changes no row: not
// a half-written intent, not a refund, not an amount.
func TestBadInputIsRejectedAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	// Fixtures: an authorised, a captured and a canceled intent.
	authorised := e.post("/v1/payment_intents", "fx-1", authorizeForm("wf-fx-1", "5000")).object["id"].(string)
	captured := e.post("/v1/payment_intents", "fx-2", authorizeForm("wf-fx-2", "5000")).object["id"].(string)
	require.Equal(t, http.StatusOK, e.post("/v1/payment_intents/"+captured+"/capture", "fx-3", url.Values{"amount_to_capture": {"3000"}}).status)
	canceled := e.post("/v1/payment_intents", "fx-4", authorizeForm("wf-fx-4", "5000")).object["id"].(string)
	require.Equal(t, http.StatusOK, e.post("/v1/payment_intents/"+canceled+"/cancel", "fx-5", nil).status)

	with := func(f url.Values, k, v string) url.Values {
		g := url.Values{}
		for key, vals := range f {
			g[key] = vals
		}
		if v == "" {
			g.Del(k)
		} else {
			g.Set(k, v)
		}
		return g
	}
	create := authorizeForm("wf-bad", "5000")
	type want struct {
		status           int
		typ, code, param string
	}
	cases := []struct {
		name string
		path string
		body string
		want want
	}{
		{"negative amount", "/v1/payment_intents", with(create, "amount", "-100").Encode(), want{400, "invalid_request_error", "parameter_invalid_integer", "amount"}},
		{"zero amount", "/v1/payment_intents", with(create, "amount", "0").Encode(), want{400, "invalid_request_error", "parameter_invalid_integer", "amount"}},
		{"amount not a number", "/v1/payment_intents", with(create, "amount", "12.50").Encode(), want{400, "invalid_request_error", "parameter_invalid_integer", "amount"}},
		{"amount too large", "/v1/payment_intents", with(create, "amount", "100000000").Encode(), want{400, "invalid_request_error", "amount_too_large", "amount"}},
		{"missing amount", "/v1/payment_intents", with(create, "amount", "").Encode(), want{400, "invalid_request_error", "parameter_missing", "amount"}},
		{"missing currency", "/v1/payment_intents", with(create, "currency", "").Encode(), want{400, "invalid_request_error", "parameter_missing", "currency"}},
		{"unknown currency", "/v1/payment_intents", with(create, "currency", "xyz").Encode(), want{400, "invalid_request_error", "", "currency"}},
		{"uppercase currency", "/v1/payment_intents", with(create, "currency", "EUR").Encode(), want{400, "invalid_request_error", "", "currency"}},
		{"unknown param", "/v1/payment_intents", with(create, "amount_typo", "1").Encode(), want{400, "invalid_request_error", "parameter_unknown", "amount_typo"}},
		{"unknown nested param", "/v1/payment_intents", with(create, "payment_method_options[card][capture_method]", "manual").Encode(),
			want{400, "invalid_request_error", "parameter_unknown", "payment_method_options[card][capture_method]"}},
		{"duplicate param", "/v1/payment_intents", create.Encode() + "&amount=6000", want{400, "invalid_request_error", "", "amount"}},
		{"malformed bracket", "/v1/payment_intents", create.Encode() + "&metadata%5Bx=1", want{400, "invalid_request_error", "", "metadata[x"}},
		{"metadata key too long", "/v1/payment_intents", with(create, "metadata["+strings.Repeat("k", 41)+"]", "v").Encode(), want{400, "invalid_request_error", "", "metadata[" + strings.Repeat("k", 41) + "]"}},
		{"unknown payment method", "/v1/payment_intents", with(create, "payment_method", "pm_nope").Encode(), want{400, "invalid_request_error", "resource_missing", "payment_method"}},
		// Stripe's 3-D Secure card exists: not resource_missing, only not payable without the hosted page.
		{"3-D Secure card", "/v1/payment_intents", with(create, "payment_method", "pm_card_authenticationRequired").Encode(), want{400, "invalid_request_error", "", "payment_method"}},
		// Without confirm the intent is created unconfirmed (Stripe's
		// requires_confirmation), so only a malformed confirm is bad input.
		{"malformed confirm", "/v1/payment_intents", with(create, "confirm", "yes").Encode(), want{400, "invalid_request_error", "", "confirm"}},
		{"bad capture method", "/v1/payment_intents", with(create, "capture_method", "later").Encode(), want{400, "invalid_request_error", "", "capture_method"}},
		{"unexpandable", "/v1/payment_intents", with(create, "expand[0]", "customer").Encode(), want{400, "invalid_request_error", "", "expand"}},
		{"unknown customer", "/v1/payment_intents", with(create, "customer", "bob").Encode(), want{400, "invalid_request_error", "resource_missing", "customer"}},
		{"capture more than authorised", "/v1/payment_intents/" + authorised + "/capture", "amount_to_capture=5001", want{400, "invalid_request_error", "amount_too_large", "amount_to_capture"}},
		{"capture canceled", "/v1/payment_intents/" + canceled + "/capture", "", want{400, "invalid_request_error", "payment_intent_unexpected_state", ""}},
		{"capture captured", "/v1/payment_intents/" + captured + "/capture", "", want{400, "invalid_request_error", "payment_intent_unexpected_state", ""}},
		{"cancel captured", "/v1/payment_intents/" + captured + "/cancel", "", want{400, "invalid_request_error", "payment_intent_unexpected_state", ""}},
		{"cancel canceled", "/v1/payment_intents/" + canceled + "/cancel", "", want{400, "invalid_request_error", "payment_intent_unexpected_state", ""}},
		{"bad cancellation reason", "/v1/payment_intents/" + authorised + "/cancel", "cancellation_reason=bored", want{400, "invalid_request_error", "", "cancellation_reason"}},
		{"capture unknown intent", "/v1/payment_intents/pi_nope/capture", "", want{404, "invalid_request_error", "resource_missing", "intent"}},
		{"refund more than captured", "/v1/refunds", "payment_intent=" + captured + "&amount=3001", want{400, "invalid_request_error", "amount_too_large", "amount"}},
		{"refund negative", "/v1/refunds", "payment_intent=" + captured + "&amount=-1", want{400, "invalid_request_error", "parameter_invalid_integer", "amount"}},
		{"refund uncaptured", "/v1/refunds", "payment_intent=" + authorised, want{400, "invalid_request_error", "payment_intent_unexpected_state", "payment_intent"}},
		{"refund canceled", "/v1/refunds", "payment_intent=" + canceled, want{400, "invalid_request_error", "payment_intent_unexpected_state", "payment_intent"}},
		{"refund unknown intent", "/v1/refunds", "payment_intent=pi_nope", want{400, "invalid_request_error", "resource_missing", "payment_intent"}},
		{"refund without target", "/v1/refunds", "amount=100", want{400, "invalid_request_error", "parameter_missing", "payment_intent"}},
		{"refund bad reason", "/v1/refunds", "payment_intent=" + captured + "&reason=whim", want{400, "invalid_request_error", "", "reason"}},
	}
	before := e.snapshot()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(http.MethodPost, tc.path, fmt.Sprintf("bad-%d", i), secretKey, tc.body)
			got := want{r.status, r.err.Type, r.err.Code, r.err.Param}
			require.Equal(t, tc.want, got, "%s", r.body)
			require.NotEmpty(t, r.err.Message)
			if tc.want.code == "payment_intent_unexpected_state" {
				require.NotNil(t, r.err.PaymentIntent, "Stripe sends the intent's current state")
				require.NotEmpty(t, r.err.PaymentIntent["status"])
			}
			require.Equal(t, before, e.snapshot(), "a rejected request must change no row")
		})
	}

	// A JSON body is not read as "no parameters".
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/payment_intents", strings.NewReader(`{"amount":5000}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+secretKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "bad-json")
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, before, e.snapshot())

	// Unknown routes answer Stripe's 404 shape.
	r := e.do(http.MethodGet, "/v1/charges", "", secretKey, "")
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "invalid_request_error", r.err.Type)
	r = e.do(http.MethodGet, "/v1/payment_intents/"+authorised+"?expand[]=customer", "", secretKey, "")
	require.Equal(t, http.StatusBadRequest, r.status)
	r = e.do(http.MethodGet, "/v1/payment_intents?limit=0", "", secretKey, "")
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "limit", r.err.Param)
}

// The schema itself refuses what the handlers are meant to prevent, so a
// future code path that forgets a check still cannot double-authorise a
// booking step or refund more than was captured (rule 11).
func TestSchemaIsTheLastLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id := e.post("/v1/payment_intents", "k-1", authorizeForm("wf-schema", "5000")).object["id"].(string)

	_, err := e.pool.Exec(ctx, `INSERT INTO payment_intents (id, tenant_id, amount, currency, status, capture_method, metadata, created_at)
		VALUES ('pi_dup', 'demo', 5000, 'eur', 'requires_capture', 'manual', '{"booking_reference":"wf-schema","step":"deposit"}', now())`)
	require.ErrorContains(t, err, "payment_intents_one_authorisation")

	require.Equal(t, http.StatusOK, e.post("/v1/payment_intents/"+id+"/capture", "k-2", nil).status)
	_, err = e.pool.Exec(ctx, `UPDATE payment_intents SET amount_refunded = amount_captured + 1 WHERE id = $1`, id)
	require.ErrorContains(t, err, "payment_intents_refunded_le_captured")
	_, err = e.pool.Exec(ctx, `UPDATE payment_intents SET amount_captured = amount + 1 WHERE id = $1`, id)
	require.ErrorContains(t, err, "payment_intents_captured_le_amount")
}
