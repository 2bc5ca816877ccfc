package channels_test

// Payment webhooks of one shop cannot reach another (docs/security.md).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// The signing secrets of the two shops' own Stripe accounts: London
// Garage attacks, the demo shop is attacked.
const (
	attackerSecret = "whsec_london_own_account"
	victimSecret   = "whsec_demo_own_account"
)

// ownAccounts applies both shops and gives each listed one the
// secret of a Stripe account of its own (STRIPE_WEBHOOK_SECRETS).
func ownAccounts(t *testing.T, secrets map[string]string) func(*config.Config, *pgxpool.Pool) {
	return func(cfg *config.Config, pool *pgxpool.Pool) {
		testsupport.TwoTenants(t, pool)
		cfg.StripeWebhookSecrets = secrets
	}
}

// routeOf is the payment webhook route of tenant's own account.
func routeOf(tenant string) string { return channels.RouteStripe + "/" + tenant }

// checkoutSession is a Checkout Session naming clientRef and, in its
// metadata, bookingRef ("": none), as any shop can create in its own
// Stripe account.
func checkoutSession(clientRef, bookingRef string) map[string]any {
	obj := map[string]any{"id": "cs_test_" + fmt.Sprint(rand.Int64()), "object": "checkout.session",
		"client_reference_id": clientRef, "metadata": map[string]string{}}
	if bookingRef != "" {
		obj["metadata"] = map[string]string{"booking_reference": bookingRef}
	}
	return obj
}

// inboxRow is the inbox's tenant and reference of a payment event;
// found is false without a row.
func (e *stripeEnv) inboxRow(t *testing.T, eventID string) (tenant, ref string, found bool) {
	t.Helper()
	err := e.pool.QueryRow(context.Background(), `SELECT tenant_id, coalesce(payload->>'reference', '')
		FROM inbox_events WHERE provider = 'stripe' AND event_id = $1`, eventID).Scan(&tenant, &ref)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false
	}
	require.NoError(t, err)
	return tenant, ref, true
}

// TestStripeEventOfOneShopCannotReachAnother: London Garage, with a
// Stripe account of its own, signs events whose client_reference_id or
// booking_reference names the demo shop's appointment. On its own route
// they are recorded as London's, without the reference; on the shared
// route (the demo shop has its own secret too) without any tenant; and
// London's secret is no good on the shared route. The demo shop gets no
// row and its payment workflow no signal, while London's own reference
// still reaches London's workflow. Before, the reference alone chose the
// tenant: the demo shop's ops page listed the event and its payment
// workflow took it as a hint.
func TestStripeEventOfOneShopCannotReachAnother(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t, ownAccounts(t, map[string]string{testsupport.LondonTenant: attackerSecret, "demo": victimSecret}))
	victim, own := newReference(), referenceOf(testsupport.LondonTenant)
	e.startRecorder(t, victim)
	e.startRecorder(t, own)
	intent := map[string]any{"id": "pi_test_foreign", "object": "payment_intent", "metadata": map[string]string{"booking_reference": victim}}
	cases := []struct {
		name, route, secret, typ string
		obj                      map[string]any
		status                   int
		tenant, ref              string // the inbox row's; tenant "": no row
	}{
		{"client_reference_id on the attacker's route", routeOf(testsupport.LondonTenant), attackerSecret, deposit.EventCheckoutCompleted,
			checkoutSession(victim, ""), http.StatusOK, testsupport.LondonTenant, ""},
		{"booking_reference on the attacker's route", routeOf(testsupport.LondonTenant), attackerSecret, deposit.EventCheckoutCompleted,
			checkoutSession(own, victim), http.StatusOK, testsupport.LondonTenant, ""},
		{"an intent's booking_reference on the attacker's route", routeOf(testsupport.LondonTenant), attackerSecret, deposit.EventIntentCapturable,
			intent, http.StatusOK, testsupport.LondonTenant, ""},
		{"the shared route, for a shop with its own secret", channels.RouteStripe, testWebhookSecret, deposit.EventCheckoutCompleted,
			checkoutSession(victim, ""), http.StatusOK, "-", ""},
		{"the attacker's secret on the shared route", channels.RouteStripe, attackerSecret, deposit.EventCheckoutCompleted,
			checkoutSession(victim, ""), http.StatusBadRequest, "", ""},
		{"the attacker's own reference on its route", routeOf(testsupport.LondonTenant), attackerSecret, deposit.EventCheckoutCompleted,
			checkoutSession(own, ""), http.StatusOK, testsupport.LondonTenant, own},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("evt_%d", rand.Int64())
			body := eventOf(id, tc.typ, tc.obj)
			status, answer := e.postTo(t, tc.route, body, signed(body, tc.secret, time.Now()))
			require.Equal(t, tc.status, status, answer)
			tenant, ref, found := e.inboxRow(t, id)
			require.Equal(t, tc.tenant != "", found, "an inbox row")
			require.Equal(t, tc.tenant, tenant)
			require.Equal(t, tc.ref, ref)
		})
	}
	require.Len(t, e.receivedN(t, own, 1), 1, "the attacker's own event reaches its workflow")
	require.Empty(t, e.received(t, victim), "no signal to the demo shop's payment workflow")
	require.EqualValues(t, 1, e.signals.sent.Load(), "the one signal is London's own")
	require.Zero(t, e.count(t, `SELECT count(*) FROM inbox_events WHERE provider = 'stripe' AND tenant_id = 'demo'`),
		"nothing on the demo shop's ops page")
}

// TestStripeEventSignedByAnotherShopIsRefused: a tenant's route verifies
// with that tenant's secret only. London's secret, or the shared one, on
// the demo shop's route is a 400; a route of a tenant without a secret
// of its own, or that the registry does not know, is a 404 alike. Each
// answer is Stripe-style JSON and nothing is recorded. Before, no such
// route existed and the shared secret spoke for every shop.
func TestStripeEventSignedByAnotherShopIsRefused(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t, ownAccounts(t, map[string]string{"demo": victimSecret, "ghost": "whsec_ghost_not_in_registry"}))
	cases := []struct {
		name, route, secret string
		status              int
	}{
		{"the attacker's secret on the victim's route", routeOf("demo"), attackerSecret, http.StatusBadRequest},
		{"the shared secret on the victim's route", routeOf("demo"), testWebhookSecret, http.StatusBadRequest},
		{"a shop without a secret of its own", routeOf(testsupport.LondonTenant), testWebhookSecret, http.StatusNotFound},
		{"a secret for a tenant the registry does not know", routeOf("ghost"), "whsec_ghost_not_in_registry", http.StatusNotFound},
		{"no such tenant", routeOf("nobody"), testWebhookSecret, http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("evt_%d", rand.Int64())
			body := eventOf(id, deposit.EventCheckoutCompleted, checkoutSession(newReference(), ""))
			status, answer := e.postTo(t, tc.route, body, signed(body, tc.secret, time.Now()))
			require.Equal(t, tc.status, status, answer)
			require.Contains(t, answer, `"error"`, "Stripe-style JSON")
			_, _, found := e.inboxRow(t, id)
			require.False(t, found, "nothing recorded")
		})
	}
	require.Zero(t, e.count(t, `SELECT count(*) FROM inbox_events WHERE provider = 'stripe'`))
	require.Zero(t, e.signals.sent.Load())
}
