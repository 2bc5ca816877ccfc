package stripeapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/payments/stripeapi"
)

const (
	secretKey      = "sk_test_bookonce_demo"
	otherTenantKey = "sk_test_bookonce_other"
)

// env is the payment API on a real loopback server and a fresh PostgreSQL
// database, with the gateway and a raw stripe-go client pointed at it.
type env struct {
	t     *testing.T
	pool  *pgxpool.Pool
	store *idempotency.Store
	srv   *httptest.Server
	gw    *payments.StripeGateway
	sc    *stripe.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(*stripeapi.Server) {})
}

// newEnvWith is newEnv with the server adjusted first (a clock, a zone).
func newEnvWith(t *testing.T, adjust func(*stripeapi.Server)) *env {
	t.Helper()
	pool := testsupport.Database(t)
	store := idempotency.NewStore(pool, idempotency.Options{ProblemStyle: idempotency.StripeJSON})
	srv := &stripeapi.Server{
		Pool: pool, Idempotency: store,
		Tokens: web.StaticTokens(map[string]string{secretKey: "demo", otherTenantKey: "other"}),
		Logger: slog.New(slog.DiscardHandler),
		// The tests' receivers are on loopback, as make run's are; a test
		// of the production check turns it off.
		AllowLoopbackEndpoints: true,
	}
	adjust(srv)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &env{
		t: t, pool: pool, store: store, srv: ts,
		gw: payments.NewStripeGateway(ts.URL, secretKey, ts.Client()),
		sc: rawClient(ts, secretKey),
	}
}

// rawClient is plain stripe-go on the API, for assertions on the wire
// (headers, raw bodies) that the gateway hides.
func rawClient(ts *httptest.Server, key string) *stripe.Client {
	cfg := &stripe.BackendConfig{
		URL: stripe.String(ts.URL), HTTPClient: ts.Client(), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	return stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
}

// count counts rows of a table matching an optional condition.
func (e *env) count(table, where string, args ...any) int {
	e.t.Helper()
	sql := "SELECT count(*) FROM " + table
	if where != "" {
		sql += " WHERE " + where
	}
	var n int
	require.NoError(e.t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// intentAmounts returns status, amount_captured and amount_refunded of a row.
func (e *env) intentAmounts(id string) (status string, captured, refunded int64) {
	e.t.Helper()
	require.NoError(e.t, e.pool.QueryRow(context.Background(),
		`SELECT status, amount_captured, amount_refunded FROM payment_intents WHERE id = $1`, id).
		Scan(&status, &captured, &refunded))
	return status, captured, refunded
}

// snapshot is the full content of the payment tables, to prove that a
// rejected request changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	var s string
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT
		coalesce((SELECT jsonb_agg(to_jsonb(p) ORDER BY id) FROM payment_intents p), '[]')::text ||
		coalesce((SELECT jsonb_agg(to_jsonb(r) ORDER BY id) FROM refunds r), '[]')::text`).Scan(&s))
	return s
}

// response is a raw HTTP answer with its decoded Stripe error, if any.
type response struct {
	status int
	header http.Header
	body   []byte
	err    struct {
		Type, Code, Message, Param string
		DeclineCode                string         `json:"decline_code"`
		PaymentIntent              map[string]any `json:"payment_intent"`
	}
	object map[string]any
}

// do sends a raw request; key "" sends no Idempotency-Key.
func (e *env) do(method, path, key, token, body string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header}
	r.body, err = io.ReadAll(res.Body)
	require.NoError(e.t, err)
	var doc struct {
		Error *json.RawMessage `json:"error"`
	}
	require.NoError(e.t, json.Unmarshal(r.body, &doc), "every answer is JSON: %s", r.body)
	if doc.Error != nil {
		requireStripeError(e.t, r.body)
		require.NoError(e.t, json.Unmarshal(*doc.Error, &r.err))
	} else {
		require.NoError(e.t, json.Unmarshal(r.body, &r.object))
	}
	return r
}

// post sends a form POST as the demo tenant.
func (e *env) post(path, key string, form url.Values) response {
	e.t.Helper()
	return e.do(http.MethodPost, path, key, secretKey, form.Encode())
}

// authorizeForm is a valid deposit authorisation.
func authorizeForm(ref string, amount string) url.Values {
	return url.Values{
		"amount": {amount}, "currency": {"eur"}, "capture_method": {"manual"}, "confirm": {"true"},
		"payment_method": {"pm_card_visa"}, "metadata[booking_reference]": {ref}, "metadata[step]": {"deposit"},
	}
}

// deposit is the gateway request used throughout.
func deposit(ref string) payments.Authorization {
	return payments.Authorization{
		Amount: 5000, Currency: "eur", Reference: ref, Step: "deposit",
		PaymentMethod: "pm_card_visa", Description: "Deposit tire change",
	}
}
