package stripeapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/payments/stripeapi"
)

// receiver is a webhook endpoint that answers the statuses it is given in
// turn (then 200) and keeps what it received.
type receiver struct {
	mu       sync.Mutex
	answers  []int
	bodies   [][]byte
	headers  []string
	endpoint *httptest.Server
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	rc := &receiver{answers: answers}
	rc.endpoint = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.bodies, rc.headers = append(rc.bodies, body), append(rc.headers, r.Header.Get("Stripe-Signature"))
		status := http.StatusOK
		if len(rc.answers) > 0 {
			status, rc.answers = rc.answers[0], rc.answers[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.endpoint.Close)
	return rc
}

// received verifies every delivery as a Stripe integration would and
// returns the events.
func (rc *receiver) received(t *testing.T, secret string) []stripe.Event {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []stripe.Event
	for i, body := range rc.bodies {
		ev, err := webhook.ConstructEvent(body, rc.headers[i], secret)
		require.NoError(t, err, "delivery %d must carry Stripe's signature", i)
		out = append(out, ev)
	}
	return out
}

func (e *env) deliverer(c *clock) *stripeapi.Deliverer {
	// The receivers are on loopback: allowed for the tests, as for make run.
	return &stripeapi.Deliverer{Pool: e.pool, Now: c.Now, MinBackoff: time.Second, MaxBackoff: 4 * time.Second,
		Logger: slog.New(slog.DiscardHandler), AllowLoopback: true}
}

// endpoint registers a webhook endpoint through stripe-go.
func (e *env) endpoint(key, u string, types ...string) *stripe.WebhookEndpoint {
	e.t.Helper()
	p := &stripe.WebhookEndpointCreateParams{URL: stripe.String(u), EnabledEvents: stripe.StringSlice(types)}
	p.SetIdempotencyKey(key)
	we, err := e.sc.V1WebhookEndpoints.Create(context.Background(), p)
	require.NoError(e.t, err)
	require.Regexp(e.t, `^whsec_`, we.Secret)
	return we
}

// An endpoint that fails twice gets the event three times, with the same
// ID and a valid signature each time, after capped backoff; an event type
// it did not enable never reaches it.
func TestWebhookRetriedUntilAccepted(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	rc := newReceiver(t, 500, 500)
	we := e.endpoint("k-we", rc.endpoint.URL, stripeapi.EventCheckoutCompleted)
	d := e.deliverer(c)
	ctx := context.Background()

	cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-cs-hook", "appointment:demo:hook", time.Time{}))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)

	steps := []struct {
		advance      time.Duration
		wantAttempts int
	}{
		{0, 1},           // 500
		{0, 0},           // not due yet
		{time.Second, 1}, // 500 after MinBackoff
		{time.Second, 0}, // backoff doubled: 2s
		{time.Second, 1}, // 200
		{time.Hour, 0},   // delivered, never again
	}
	for i, s := range steps {
		c.advance(s.advance)
		n, err := d.Pass(ctx)
		require.NoError(t, err)
		require.Equal(t, s.wantAttempts, n, "step %d", i)
	}
	got := rc.received(t, we.Secret)
	require.Len(t, got, 3)
	for _, ev := range got {
		require.Equal(t, got[0].ID, ev.ID, "a retry is the same event")
		require.Equal(t, stripe.EventType(stripeapi.EventCheckoutCompleted), ev.Type)
		var s stripe.CheckoutSession
		require.NoError(t, json.Unmarshal(ev.Data.Raw, &s))
		require.Equal(t, cs.ID, s.ID)
	}
	require.Equal(t, 1, e.count("webhook_deliveries", "delivered_at IS NOT NULL AND attempts = 3 AND last_status = 200"))
	_, err = webhook.ConstructEvent(rc.bodies[0], rc.headers[0], "whsec_wrong")
	require.Error(t, err, "another secret must not verify")
}

// The configured endpoint receives every event type; the drill's knob
// sends each one twice, byte for byte.
func TestConfiguredEndpointDeliversTwiceOnPurpose(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	rc := newReceiver(t)
	d := e.deliverer(c)
	d.Twice = true
	d.Endpoints = []stripeapi.ConfigEndpoint{{Tenant: "demo", URL: rc.endpoint.URL, Secret: "whsec_configured"}}
	n, err := d.Pass(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, 1, e.count("webhook_endpoints", ""), "the configured endpoint exists before the first event")

	cs, err := e.sc.V1CheckoutSessions.Create(context.Background(), sessionParams("k-cs-cfg", "appointment:demo:cfg", time.Time{}))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)
	n, err = d.Pass(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n, "amount_capturable_updated and checkout.session.completed")
	got := rc.received(t, "whsec_configured")
	require.Len(t, got, 4)
	// Each event twice, byte for byte; the two events' deliveries may
	// interleave (seen under make test's load).
	bodies := map[string][]string{}
	types := map[string]stripe.EventType{}
	for i, ev := range got {
		bodies[ev.ID] = append(bodies[ev.ID], string(rc.bodies[i]))
		types[ev.ID] = ev.Type
	}
	require.Len(t, bodies, 2, "two events, each delivered twice")
	var seen []stripe.EventType
	for id, b := range bodies {
		require.Len(t, b, 2, "event %s", id)
		require.Equal(t, b[0], b[1], "the second delivery of %s is the same bytes", id)
		seen = append(seen, types[id])
	}
	require.ElementsMatch(t, []stripe.EventType{stripeapi.EventAmountCapturableUpdated, stripeapi.EventCheckoutCompleted}, seen)
}

// The payment link as the payments process serves it (stack wiring,
// dev configuration): the session, the page and the configured webhook.
func TestPaymentLinkThroughTheStack(t *testing.T) {
	t.Parallel()
	cfg := testsupport.Config(t)
	pool := testsupport.Database(t)
	api := stacktest.PaymentsAPI(t, cfg, pool)
	rc := newReceiver(t)
	cfg.StripeWebhookURL, cfg.StripeWebhookSecret = rc.endpoint.URL, "whsec_stack"
	d := stack.PaymentsWebhooks(cfg, pool, nil, slog.New(slog.DiscardHandler))
	sc := rawClient(api, config.DefaultAPIToken)
	ctx := context.Background()

	_, err := d.Pass(ctx) // the configured endpoint exists before the first event
	require.NoError(t, err)
	cs, err := sc.V1CheckoutSessions.Create(ctx, sessionParams("k-stack", "appointment:demo:stack", time.Time{}))
	require.NoError(t, err)
	res, err := api.Client().PostForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}})
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	n, err := d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	types := []stripe.EventType{}
	for _, ev := range rc.received(t, "whsec_stack") {
		types = append(types, ev.Type)
	}
	require.ElementsMatch(t, []stripe.EventType{stripeapi.EventAmountCapturableUpdated, stripeapi.EventCheckoutCompleted}, types)
}

// A tenant disables its endpoint (Stripe's disabled=true) and enables it
// again: while disabled, its undelivered event is held and attempted no
// more, and new events skip it; enabled, the held event is delivered.
// Disabling by request records no event. The operator's configured
// endpoint is not the tenant's to read or change, and Stripe's parameters
// this API does not implement are refused.
func TestTenantDisablesAndEnablesItsEndpoint(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	ctx := context.Background()
	rc := newReceiver(t)
	we := e.endpoint("k-we-toggle", rc.endpoint.URL, stripeapi.EventCheckoutCompleted)
	d := e.deliverer(c)
	d.Endpoints = []stripeapi.ConfigEndpoint{{Tenant: "demo", URL: newReceiver(t).endpoint.URL, Secret: "whsec_operator"}}
	_, err := d.Pass(ctx)
	require.NoError(t, err)
	e.pay(e.sc, "k-cs-toggle", "appointment:demo:toggle")

	update := func(key string, disabled bool) *stripe.WebhookEndpoint {
		p := &stripe.WebhookEndpointUpdateParams{Disabled: stripe.Bool(disabled)}
		p.SetIdempotencyKey(key)
		got, err := e.sc.V1WebhookEndpoints.Update(ctx, we.ID, p)
		require.NoError(t, err)
		require.Empty(t, got.Secret, "the secret is shown only on creation")
		return got
	}
	require.Equal(t, "disabled", update("k-off", true).Status)
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1 AND held = 'endpoint_disabled'", we.ID))
	e.pay(e.sc, "k-cs-toggle-2", "appointment:demo:toggle-2")
	_, err = d.Pass(ctx)
	require.NoError(t, err)
	require.Empty(t, rc.received(t, we.Secret), "nothing reaches a disabled endpoint")
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1", we.ID), "no new events for it")
	require.Empty(t, e.events(stripeapi.EventEndpointDisabled), "the tenant knows: no event")

	require.Equal(t, "enabled", update("k-on", false).Status)
	n, err := d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1 AND delivered_at IS NOT NULL", we.ID))

	for _, r := range []response{
		e.do(http.MethodGet, "/v1/webhook_endpoints/we_config_nope", "", secretKey, ""),
		e.post("/v1/webhook_endpoints/"+e.configEndpointID(), "k-cfg", url.Values{"disabled": {"true"}}),
		e.post("/v1/webhook_endpoints/"+we.ID, "k-url", url.Values{"url": {"https://example.com/moved"}}),
		e.do(http.MethodGet, "/v1/webhook_endpoints/"+we.ID, "", otherTenantKey, ""),
	} {
		require.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, r.status)
		require.Equal(t, "invalid_request_error", r.err.Type)
	}
	require.Equal(t, 0, e.count("webhook_endpoints", "status = 'disabled'"))
}

// configEndpointID is the ID of the demo tenant's configured endpoint.
func (e *env) configEndpointID() string {
	e.t.Helper()
	var id string
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT id FROM webhook_endpoints WHERE id LIKE 'we_config_%'`).Scan(&id))
	return id
}

// A burst of failures to an endpoint that is down for a few minutes does
// not disable it, however many: the failures must also span
// DefaultDisableAfter.
func TestBurstOfFailuresDoesNotDisable(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	ctx := context.Background()
	rc := newReceiver(t, slices.Repeat([]int{http.StatusServiceUnavailable}, 2*stripeapi.DefaultDisableAfterFailures)...)
	we := e.endpoint("k-we-burst", rc.endpoint.URL, "*")
	e.pay(e.sc, "k-cs-burst", "appointment:demo:burst")
	d := e.deliverer(c)
	for range stripeapi.DefaultDisableAfterFailures {
		_, err := d.Pass(ctx)
		require.NoError(t, err)
		c.advance(4 * time.Second) // MaxBackoff of the test deliverer
	}
	require.GreaterOrEqual(t, len(rc.received(t, we.Secret)), 2*stripeapi.DefaultDisableAfterFailures-1)
	require.Equal(t, 1, e.count("webhook_endpoints", "id = $1 AND status = 'enabled'", we.ID))
}

// The deliveries in flight are bounded in all (MaxInFlight) as well as
// per tenant: a tenant with a larger share still holds no more than the
// bound.
func TestDeliveriesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	e, c := newClockEnv(t)
	hole := newBlackHole(t)
	for i := range 8 {
		e.endpoint(fmt.Sprintf("k-we-bound-%d", i), hole.url(fmt.Sprint(i)), "*")
	}
	e.pay(e.sc, "k-cs-bound", "appointment:demo:bound")
	d := e.deliverer(c)
	d.Timeout = 500 * time.Millisecond
	d.MaxInFlight, d.PerTenant = 3, 10
	run(t, d)
	require.Eventually(t, func() bool { return hole.accepted.Load() >= 9 }, 10*time.Second, 5*time.Millisecond, "three rounds")
	require.Equal(t, int64(3), hole.peak.Load())
}
