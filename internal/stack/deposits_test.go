package stack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestGatewayFollowsDepositMode: in link mode the gateway's conversations
// start bookings without a payment method (the saga sends a link); in card
// mode with the lab's test card. The gateway verifies payment webhooks
// with STRIPE_WEBHOOK_SECRET.
func TestGatewayFollowsDepositMode(t *testing.T) {
	pool := testsupport.Database(t)
	tenants := testsupport.Tenants(t, pool)
	for _, tc := range []struct {
		mode config.DepositMode
		want string
	}{{config.DepositLink, ""}, {config.DepositCard, stack.ConversationCard}} {
		cfg := testsupport.Config(t)
		cfg.DepositMode, cfg.StripeWebhookSecret = tc.mode, "whsec_stack_test"
		gw, _ := stack.Gateway(cfg, pool, nil, tenants, stack.Logger(cfg, io.Discard))
		require.Equal(t, tc.want, gw.PaymentMethod, tc.mode)
		require.Equal(t, "whsec_stack_test", gw.StripeWebhookSecret)
	}
}

// TestPaymentsPublicURLNamesTheHostedPage: a Checkout Session's url starts
// with PAYMENTS_PUBLIC_URL, where customers reach the page, not with the
// address the worker called.
func TestPaymentsPublicURLNamesTheHostedPage(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.PaymentsPublicURL = "https://pay.example.com"
	api := stacktest.PaymentsAPI(t, cfg, pool)
	sc := testsupport.StripeClient(api.URL, config.DefaultAPIToken)
	p := testsupport.DepositSession("appointment:demo:public-url", "http://127.0.0.1:8080/paid")
	p.SetIdempotencyKey("k-public-url")
	cs, err := sc.V1CheckoutSessions.Create(context.Background(), p)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cs.URL, "https://pay.example.com/pay/cs_test_"), cs.URL)
}

// TestWorkerPaysWithStripeSecretKey: with STRIPE_SECRET_KEY the worker
// calls the payment API with that key for every tenant; without it, with
// a service token it minted for the tenant (never the tenant's own token).
func TestWorkerPaysWithStripeSecretKey(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"test"}}`)
	}))
	defer provider.Close()
	for _, tc := range []struct{ key, want string }{{"sk_test_shared", "Bearer sk_test_shared"}, {"", "Bearer " + servicetoken.Prefix}} {
		cfg := testsupport.Config(t)
		cfg.PaymentsURL, cfg.StripeSecretKey = provider.URL, tc.key
		gw, err := stack.NewActivities(cfg, nil, nil, nil).Payments(config.DefaultTenant)
		require.NoError(t, err)
		_, err = gw.Void(context.Background(), "k-void-"+tc.key, "pi_x")
		require.Error(t, err, "the provider refused")
		mu.Lock()
		require.True(t, strings.HasPrefix(auth[len(auth)-1], tc.want), "%s, not %s…", auth[len(auth)-1], tc.want)
		mu.Unlock()
	}
}
