package stripeapi_test

// Attacks on the payment API by another tenant (docs/security.md).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v84"

	"github.com/bookonce/bookonce/payments/stripeapi"
)

// storedReferences are references the demo tenant stores, and whether
// that is allowed: its own and free text, never another tenant's.
var storedReferences = []struct {
	ref string
	ok  bool
}{
	{"appointment:demo:mine", true},
	{"front-desk-42", true},
	{"appointment:other:theirs", false},
	{"appointment:other:theirs#move-1", false},
	{"booking:appointment:other:theirs", false},
	{"payment:appointment:other:theirs", false},
}

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
	for _, c := range storedReferences {
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

// TestForeignClientReferenceIsRefused: a Checkout Session without a
// booking_reference whose client_reference_id names B's appointment is
// refused like a foreign booking_reference (the gateway falls back on
// it); before, only the metadata was checked.
func TestForeignClientReferenceIsRefused(t *testing.T) {
	e := newEnv(t)
	for _, c := range storedReferences {
		t.Run(c.ref, func(t *testing.T) {
			params := sessionParams("cs-client-"+c.ref, c.ref, time.Time{})
			params.Metadata, params.PaymentIntentData.Metadata = nil, nil
			sessions := e.count("checkout_sessions", "")
			_, err := e.sc.V1CheckoutSessions.Create(context.Background(), params)
			if c.ok {
				require.NoError(t, err)
				return
			}
			var se *stripe.Error
			require.True(t, errors.As(err, &se), "%v", err)
			require.Equal(t, stripe.ErrorTypeInvalidRequest, se.Type)
			require.Equal(t, "client_reference_id", se.Param)
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

// TestTenantEndpointCannotReachPrivateAddresses: a tenant registers a
// webhook endpoint on a loopback address (as it would the cloud metadata
// service or a cluster service) and pays a link so that events are due.
// The deliverer refuses to connect, after resolution, and records why;
// nothing reaches the receiver from the tenant's endpoint. The
// operator's configured endpoint on the same address still gets its
// events. Before, any URL was called and pending_webhooks told the
// tenant whether it answered.
func TestTenantEndpointCannotReachPrivateAddresses(t *testing.T) {
	e, c := newClockEnv(t)
	ctx := context.Background()
	tenantRc, operatorRc := newReceiver(t), newReceiver(t)
	e.endpoint("k-we-ssrf", tenantRc.endpoint.URL, "*")
	d := e.deliverer(c)
	d.AllowLoopback = false
	d.Endpoints = []stripeapi.ConfigEndpoint{{Tenant: "demo", URL: operatorRc.endpoint.URL, Secret: "whsec_operator"}}
	_, err := d.Pass(ctx) // creates the operator's endpoint before the events
	require.NoError(t, err)

	cs, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-cs-ssrf", "appointment:demo:ssrf", time.Time{}))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.payForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}}).status)
	_, err = d.Pass(ctx)
	require.NoError(t, err)

	require.Empty(t, tenantRc.received(t, "unused"), "nothing from the tenant's endpoint")
	require.NotEmpty(t, operatorRc.received(t, "whsec_operator"), "the operator's endpoint is served")
	require.Positive(t, e.count("webhook_deliveries", "endpoint_id NOT LIKE 'we_config_%' AND delivered_at IS NULL AND last_error LIKE '%private, loopback%'"))
}

func TestPublicAddresses(t *testing.T) {
	for addr, public := range map[string]bool{
		"1.1.1.1": true, "2001:4860:4860::8888": true, "8.8.8.8": true, "2a00:1450:4001::1": true, "192.0.3.1": true, "198.20.0.1": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "100.64.0.1": false, "0.0.0.0": false, "::": false,
		"0.1.2.3": false, "fd00::1": false, "::ffff:127.0.0.1": false, "224.0.0.1": false,
		// The IANA special-purpose registries' blocks that are not globally
		// reachable, or translate to internal addresses.
		"64:ff9b::a9fe:a9fe": false, "64:ff9b:1::1": false, "2002:a9fe:a9fe::1": false, "2001:0:4136:e378::1": false,
		"2001:db8::1": false, "100::1": false, "3fff::1": false, "5f00::1": false,
		"198.18.0.1": false, "198.19.255.254": false, "240.0.0.1": false, "255.255.255.255": false,
		"192.0.0.8": false, "192.0.2.1": false, "198.51.100.1": false, "203.0.113.7": false, "192.88.99.1": false,
	} {
		require.Equal(t, public, stripeapi.Public(netip.MustParseAddr(addr)), addr)
	}
}

// TestEndpointsPerTenantAreCapped: a tenant has at most MaxEndpoints
// webhook endpoints (each failing one is retried, and their number bounds
// what one tenant can cost the others); one more is refused, nothing
// written.
func TestEndpointsPerTenantAreCapped(t *testing.T) {
	e := newEnv(t)
	for i := range stripeapi.MaxEndpoints {
		e.endpoint(fmt.Sprintf("k-cap-%d", i), fmt.Sprintf("https://hooks.example/%d", i), "*")
	}
	p := &stripe.WebhookEndpointCreateParams{URL: stripe.String("https://hooks.example/one-more"), EnabledEvents: stripe.StringSlice([]string{"*"})}
	p.SetIdempotencyKey("k-cap-more")
	_, err := e.sc.V1WebhookEndpoints.Create(context.Background(), p)
	var se *stripe.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)
	require.Contains(t, se.Msg, "maximum of 16")
	require.Equal(t, stripeapi.MaxEndpoints, e.count("webhook_endpoints", "tenant_id = 'demo'"))
}

// TestBlackHoledEndpointsDoNotDelayOtherTenants: tenant A (other)
// registers its MaxEndpoints endpoints on a loopback server that accepts
// connections and never answers, and pays a link: 2 events for each of 16
// endpoints, each attempt waiting for the delivery timeout. While they
// hold, tenant B's (demo) payment reaches B's endpoint, B's Checkout
// Session that lapses meanwhile is expired by the sweep, and A's next
// payment reaches the operator's endpoint for A (the gateway), each
// within one timeout; A holds at most its share of connections. Before,
// one loop made every attempt in turn and expired sessions only between
// passes, so B waited for all of A's timeouts (32 x 2 s here, 32 x 10 s
// in production, more with more events). The attempts time out after 10 s
// and each must have happened within 5 s: a bound on waiting for none of
// A's attempts, not a measure of speed (2 s and "within one timeout"
// failed once under make test's load at 2.02 s).
func TestBlackHoledEndpointsDoNotDelayOtherTenants(t *testing.T) {
	e, c := newClockEnv(t)
	ctx := context.Background()
	// Long enough that waiting for even one of A's attempts shows beyond
	// any scheduling delay of a loaded machine: the bound below is half.
	const timeout = 10 * time.Second
	hole := newBlackHole(t)
	a := rawClient(e.srv, otherTenantKey)
	for i := range stripeapi.MaxEndpoints {
		p := &stripe.WebhookEndpointCreateParams{URL: stripe.String(hole.url(fmt.Sprint(i))), EnabledEvents: stripe.StringSlice([]string{"*"})}
		p.SetIdempotencyKey(fmt.Sprintf("k-hole-%d", i))
		_, err := a.V1WebhookEndpoints.Create(ctx, p)
		require.NoError(t, err)
	}
	e.pay(a, "k-cs-a", "appointment:other:hole")
	rc := newReceiver(t)
	e.endpoint("k-we-b", rc.endpoint.URL, stripeapi.EventCheckoutCompleted)
	lapsing, err := e.sc.V1CheckoutSessions.Create(ctx, sessionParams("k-cs-b-lapse", "appointment:demo:lapse", c.Now().Add(stripeapi.MinSessionLifetime)))
	require.NoError(t, err)
	operator := newReceiver(t)
	d := e.deliverer(c)
	d.Timeout = timeout // each attempt, at the tenants' endpoints and the operator's
	d.Endpoints = []stripeapi.ConfigEndpoint{{Tenant: "other", URL: operator.endpoint.URL, Secret: "whsec_operator"}}
	run(t, d)
	require.Eventually(t, func() bool { return hole.open.Load() > 0 }, 5*time.Second, 5*time.Millisecond, "A's deliveries hold")

	start := time.Now()
	c.advance(stripeapi.MinSessionLifetime + time.Minute) // B's link lapses while A's attempts hold
	e.pay(e.sc, "k-cs-b", "appointment:demo:paid")
	e.pay(a, "k-cs-a-2", "appointment:other:paid")
	var delivered, expired, operated time.Duration
	since := func(at *time.Duration, happened bool) bool {
		if *at == 0 && happened {
			*at = time.Since(start)
		}
		return *at > 0
	}
	require.Eventually(t, func() bool {
		b := since(&delivered, rc.deliveries() > 0)
		x := since(&expired, e.count("checkout_sessions", "id = $1 AND status = 'expired'", lapsing.ID) == 1)
		return since(&operated, operator.deliveries() > 0) && b && x
	}, 4*timeout, 5*time.Millisecond, "B's webhook, B's expiry and A's webhook to the operator")
	t.Logf("B delivered after %v, B's session expired after %v, A's event at the operator's endpoint after %v; A holds %d connections at most",
		delivered, expired, operated, hole.peak.Load())
	require.Less(t, delivered, timeout/2, "B's webhook waits for none of A's timeouts")
	require.Less(t, expired, timeout/2, "B's expiry waits for none of A's timeouts")
	require.Less(t, operated, timeout/2, "the operator's endpoint for A waits for none of A's own")
	require.LessOrEqual(t, hole.peak.Load(), int64(stripeapi.DefaultPerTenant), "A holds at most its share")
}

// TestFailingEndpointIsDisabled: a tenant's endpoint that answers 500 to
// every attempt is retried, but not forever: once its last
// DefaultDisableAfterFailures attempts all failed over at least
// DefaultDisableAfter it is disabled (status "disabled", as Stripe's
// object shows), a webhook_endpoint.disabled event tells the tenant (here
// at its other endpoint), a warning without the URL's path or the secret
// tells the operator, and the undelivered event says why it waits
// (held). A disabled endpoint is attempted no more and gets no new
// events; disabled=false enables it again and the held event is
// delivered. Before, a failing endpoint was retried forever.
func TestFailingEndpointIsDisabled(t *testing.T) {
	e, c := newClockEnv(t)
	ctx := context.Background()
	failures := stripeapi.DefaultDisableAfterFailures
	step := stripeapi.DefaultDisableAfter / time.Duration(failures-2) // the 19th failure is DefaultDisableAfter after the 1st
	broken := newReceiver(t, slices.Repeat([]int{http.StatusInternalServerError}, failures)...)
	we := e.endpoint("k-we-broken", broken.endpoint.URL+"/hooks?token=s3cr3t", stripeapi.EventCheckoutCompleted)
	told := newReceiver(t)
	toldWe := e.endpoint("k-we-told", told.endpoint.URL, stripeapi.EventEndpointDisabled)
	d := e.deliverer(c)
	var logs lockedBuffer
	d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.pay(e.sc, "k-cs-broken", "appointment:demo:broken")

	status := func() string {
		got, err := e.sc.V1WebhookEndpoints.Retrieve(ctx, we.ID, nil)
		require.NoError(t, err)
		return got.Status
	}
	for i := 1; i <= failures; i++ {
		require.Equal(t, "enabled", status(), "before attempt %d", i)
		n, err := d.Pass(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		c.advance(step)
	}
	require.Equal(t, "disabled", status())
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1 AND delivered_at IS NULL AND held = 'endpoint_disabled' AND last_status = 500", we.ID))
	disabled := e.events(stripeapi.EventEndpointDisabled)
	require.Len(t, disabled, 1)
	require.Contains(t, string(disabled[0].Data.Raw), `"status":"disabled"`)
	require.Contains(t, string(disabled[0].Data.Raw), we.ID)
	require.Contains(t, logs.String(), "level=WARN msg=\"payments: webhook endpoint disabled after repeated failures\"")
	require.NotContains(t, logs.String(), "s3cr3t")
	require.NotContains(t, logs.String(), we.Secret)

	e.pay(e.sc, "k-cs-broken-2", "appointment:demo:broken-2")
	c.advance(time.Hour)
	n, err := d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the disabled event, to the endpoint that is told")
	require.Len(t, broken.received(t, we.Secret), failures, "no attempt at a disabled endpoint")
	require.Len(t, told.received(t, toldWe.Secret), 1)
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1", we.ID), "a disabled endpoint gets no new events")

	p := &stripe.WebhookEndpointUpdateParams{Disabled: stripe.Bool(false)}
	p.SetIdempotencyKey("k-we-enable")
	enabled, err := e.sc.V1WebhookEndpoints.Update(ctx, we.ID, p)
	require.NoError(t, err)
	require.Equal(t, "enabled", enabled.Status)
	n, err = d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the held event is due at once")
	require.Len(t, broken.received(t, we.Secret), failures+1)
	require.Equal(t, 1, e.count("webhook_deliveries", "endpoint_id = $1 AND delivered_at IS NOT NULL AND held IS NULL", we.ID))
}

// TestEndpointTokenStaysOutOfLogsAndLastError: a shop's endpoint that
// carries a token in its query (…/hook?token=…) and refuses connections.
// Go's *url.Error prints the whole URL, which went into the per-attempt
// log line and the delivery's stored last_error; both now carry the URL
// without its query.
func TestEndpointTokenStaysOutOfLogsAndLastError(t *testing.T) {
	e, c := newClockEnv(t)
	ctx := context.Background()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // connections are refused from now on
	we := e.endpoint("k-we-gone", gone.URL+"/hook?token=s3cr3t#frag", stripeapi.EventCheckoutCompleted)
	d := e.deliverer(c)
	var logs lockedBuffer
	d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.pay(e.sc, "k-cs-gone", "appointment:demo:gone")

	n, err := d.Pass(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var lastError string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(last_error, '') FROM webhook_deliveries WHERE endpoint_id = $1`, we.ID).Scan(&lastError))
	require.Contains(t, lastError, "connection refused", "the cause is kept")
	require.Contains(t, lastError, "/hook?REDACTED")
	require.NotContains(t, lastError, "s3cr3t")
	require.Contains(t, logs.String(), "payments: webhook not delivered")
	require.NotContains(t, logs.String(), "s3cr3t")
}

func TestRedactedURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://shop.example/hook", "https://shop.example/hook"},
		{"https://shop.example/hook?token=s3cr3t", "https://shop.example/hook?REDACTED"},
		{"https://user:pw@shop.example/hook#x", "https://shop.example/hook"},
		{"https://shop.example/hook?", "https://shop.example/hook?REDACTED"},
		{"://nope", "(an unparseable URL)"},
	} {
		require.Equal(t, tc.want, stripeapi.RedactedURL(tc.in), tc.in)
	}
}

// TestDevelopmentAllowanceIsLoopbackOnly: make run lets tenants'
// endpoints be on this machine (AllowLoopback), and nothing more: an
// endpoint on the cloud metadata address is refused at connect time, as
// in production, while the loopback one is served. Before, the
// development switch admitted every address, link-local included.
func TestDevelopmentAllowanceIsLoopbackOnly(t *testing.T) {
	e, c := newClockEnv(t)
	ctx := context.Background()
	local := newReceiver(t)
	we := e.endpoint("k-we-local", local.endpoint.URL, "*")
	// Refused at creation now (TestEndpointCreationRefusesNonPublicURLs);
	// written as one created before that check, or a name that resolves
	// to the address, would be.
	metadata := &stripe.WebhookEndpoint{ID: "we_metadata"}
	_, err := e.pool.Exec(ctx, `INSERT INTO webhook_endpoints (id, tenant_id, url, secret, enabled_events, created_at)
		VALUES ($1, 'demo', 'http://169.254.169.254/latest/meta-data/', 'whsec_metadata', '{*}', now())`, metadata.ID)
	require.NoError(t, err)
	d := e.deliverer(c)
	d.AllowLoopback = true
	e.pay(e.sc, "k-cs-dev", "appointment:demo:dev")

	_, err = d.Pass(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, local.received(t, we.Secret), "the endpoint on this machine is served")
	require.Positive(t, e.count("webhook_deliveries", "endpoint_id = $1 AND delivered_at IS NULL AND last_error LIKE '%private, loopback%'", metadata.ID))
	require.Zero(t, e.count("webhook_deliveries", "endpoint_id = $1 AND delivered_at IS NOT NULL", metadata.ID))
}

// TestEndpointCreationRefusesNonPublicURLs: a tenant's endpoint whose URL
// names an address that is not public (loopback, private, link-local such
// as the cloud metadata service, reserved) is refused when it is created,
// with a clear error and nothing written, as Stripe refuses a localhost
// endpoint; make run's allowance admits this machine's loopback and
// nothing more. A name passes: what it resolves to is checked at each
// delivery. Before, any URL was accepted and failed only at delivery.
func TestEndpointCreationRefusesNonPublicURLs(t *testing.T) {
	cases := []struct {
		url                 string
		production, makeRun bool // accepted
	}{
		{"https://hooks.shop.example/stripe", true, true},
		{"https://1.1.1.1/hook", true, true},
		{"http://127.0.0.1:8099/hook", false, true},
		{"http://[::1]:8099/hook", false, true},
		{"http://localhost:8099/hook", false, true},
		{"http://api.localhost/hook", false, true},
		{"http://169.254.169.254/latest/meta-data/", false, false},
		{"http://[fe80::1]/hook", false, false},
		{"http://10.0.0.7/hook", false, false},
		{"http://192.168.1.10/hook", false, false},
		{"http://0.0.0.0:8099/hook", false, false},
		{"http://[64:ff9b::a9fe:a9fe]/hook", false, false},
		{"http://100.64.0.1/hook?token=s3cret", false, false},
	}
	for _, loopback := range []bool{false, true} {
		e := newEnvWith(t, func(s *stripeapi.Server) { s.AllowLoopbackEndpoints = loopback })
		for i, tc := range cases {
			want := tc.production
			if loopback {
				want = tc.makeRun
			}
			p := &stripe.WebhookEndpointCreateParams{URL: stripe.String(tc.url), EnabledEvents: stripe.StringSlice([]string{"*"})}
			p.SetIdempotencyKey(fmt.Sprintf("k-public-%d", i))
			_, err := e.sc.V1WebhookEndpoints.Create(context.Background(), p)
			if want {
				require.NoError(t, err, "%s (loopback allowed: %v)", tc.url, loopback)
				continue
			}
			var se *stripe.Error
			require.ErrorAs(t, err, &se, "%s (loopback allowed: %v)", tc.url, loopback)
			require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)
			require.Equal(t, "url", se.Param)
			require.Contains(t, se.Msg, "publicly accessible")
			require.NotContains(t, se.Msg, "s3cret", "the URL's query stays out of the answer")
			require.Zero(t, e.count("webhook_endpoints", "url = $1", tc.url), "nothing written: %s", tc.url)
		}
	}
}
