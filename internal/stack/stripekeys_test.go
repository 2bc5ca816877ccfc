package stack_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestEachShopPaysIntoItsOwnStripeAccount: the worker calls the payment
// provider with London's own key (STRIPE_SECRET_KEYS) for London and with
// the shared key for the demo shop; against real Stripe a shop with no
// key at all is refused before any request, saying what to set.
func TestEachShopPaysIntoItsOwnStripeAccount(t *testing.T) {
	var (
		mu   sync.Mutex
		auth []string
	)
	stripe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object": "search_result", "data": [], "has_more": false, "url": "/v1/payment_intents/search"}`)
	}))
	t.Cleanup(stripe.Close)
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.PaymentsURL, cfg.StripeSecretKey = stripe.URL, "sk_test_shared"
	cfg.StripeSecretKeys = map[string]string{"london": "sk_test_london"}
	acts := stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), nil)
	for _, tc := range []struct{ tenant, key string }{{"london", "sk_test_london"}, {"demo", "sk_test_shared"}} {
		g, err := acts.Payments(tc.tenant)
		require.NoError(t, err)
		_, found, err := g.FindByReference(context.Background(), "appointment:"+tc.tenant+":x", "")
		require.NoError(t, err)
		require.False(t, found)
		mu.Lock()
		require.Equal(t, "Bearer "+tc.key, auth[len(auth)-1], tc.tenant)
		mu.Unlock()
	}

	cfg.PaymentsURL, cfg.StripeSecretKey = config.StripeAPIURL, ""
	_, err := stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), nil).Payments("demo")
	require.ErrorIs(t, err, config.ErrNoStripeKey)
	require.ErrorContains(t, err, "STRIPE_SECRET_KEYS")
}
