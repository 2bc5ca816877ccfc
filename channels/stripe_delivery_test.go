package channels_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/payments/stripeapi"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// TestStripeWebhookFromOurPaymentAPI: a payment link paid on our payment
// API's hosted page reaches the payment workflow through the API's own
// webhook delivery (stripeapi.Deliverer), signed as Stripe signs, verified
// by the gateway: the signature format is the real one end to end.
func TestStripeWebhookFromOurPaymentAPI(t *testing.T) {
	t.Parallel()
	e := newStripeEnv(t)
	ctx := context.Background()
	api := stacktest.PaymentsAPI(t, testsupport.Config(t), e.pool)
	d := &stripeapi.Deliverer{Pool: e.pool, Endpoints: []stripeapi.ConfigEndpoint{
		{Tenant: config.DefaultTenant, URL: e.url + channels.RouteStripe, Secret: testWebhookSecret}}}
	_, err := d.Pass(ctx) // the endpoint exists before the events
	require.NoError(t, err)

	ref := newReference()
	e.startRecorder(t, ref)
	sc := testsupport.StripeClient(api.URL, config.DefaultAPIToken)
	p := testsupport.DepositSession(ref, e.url+channels.RoutePaid+"?session={CHECKOUT_SESSION_ID}")
	p.SetIdempotencyKey("k-link-" + ref)
	cs, err := sc.V1CheckoutSessions.Create(ctx, p)
	require.NoError(t, err)
	res, err := http.PostForm(cs.URL, url.Values{"payment_method": {"pm_card_visa"}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "paid on the hosted page")

	var types []string
	testsupport.Eventually(t, 30*time.Second, "the link's events at the payment workflow", func() bool {
		_, err := d.Pass(ctx)
		require.NoError(t, err)
		types = types[:0]
		for _, ev := range e.received(t, ref) {
			types = append(types, ev.Type)
		}
		return slices.Contains(types, deposit.EventCheckoutCompleted) && slices.Contains(types, deposit.EventIntentCapturable)
	})
	for _, ev := range e.received(t, ref) {
		require.Equal(t, "delivered", e.state(t, ev.EventID))
		if ev.Type == deposit.EventCheckoutCompleted {
			require.Equal(t, cs.ID, ev.SessionID)
			require.NotEmpty(t, ev.IntentID)
		}
	}
	require.Equal(t, len(types), e.count(t, `SELECT count(*) FROM inbox_events WHERE provider = 'stripe' AND tenant_id = 'demo'`),
		"every delivered event recorded once, under its tenant")
}
