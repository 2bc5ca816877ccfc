package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDepositModeAndProvider: payment links by default; which payment API
// the worker talks to, with which key, follows PAYMENTS_URL and
// STRIPE_SECRET_KEY; the hosted page's public URL is taken as given.
func TestDepositModeAndProvider(t *testing.T) {
	cases := []struct {
		name          string
		env           map[string]string
		mode          DepositMode
		paymentsURL   string
		publicURL     string
		authoritative bool
		scrapes       int // OPS_SCRAPE_URLS entries by default
		wantErr       string
	}{
		{"defaults: links, our API on loopback", nil, DepositLink, "http://127.0.0.1:8082", "", true, 3, ""},
		{"card", map[string]string{"DEPOSIT_MODE": "card"}, DepositCard, "http://127.0.0.1:8082", "", true, 3, ""},
		{"mode is case-insensitive", map[string]string{"DEPOSIT_MODE": " LINK "}, DepositLink, "http://127.0.0.1:8082", "", true, 3, ""},
		{"unknown mode", map[string]string{"DEPOSIT_MODE": "cash"}, "", "", "", false, 0, `DEPOSIT_MODE must be "link" or "card"`},
		{"public URL", map[string]string{"PAYMENTS_PUBLIC_URL": "https://pay.example.com/"}, DepositLink, "http://127.0.0.1:8082", "https://pay.example.com", true, 3, ""},
		{"public URL not a URL", map[string]string{"PAYMENTS_PUBLIC_URL": "pay.example.com"}, "", "", "", false, 0, "PAYMENTS_PUBLIC_URL must be an http(s) URL"},
		{"secret key alone: real Stripe", map[string]string{"STRIPE_SECRET_KEY": "sk_test_123"}, DepositLink, StripeAPIURL, "", false, 2, ""},
		{"secret key with PAYMENTS_URL: that URL", map[string]string{"STRIPE_SECRET_KEY": "sk_test_123", "PAYMENTS_URL": "http://stripe-mock:12111/"},
			DepositLink, "http://stripe-mock:12111", "", true, 3, ""},
		{"blank PAYMENTS_URL counts as unset", map[string]string{"STRIPE_SECRET_KEY": "rk_test_123", "PAYMENTS_URL": " "}, DepositLink, StripeAPIURL, "", false, 2, ""},
		{"not a secret key", map[string]string{"STRIPE_SECRET_KEY": "pk_test_123"}, "", "", "", false, 0, "STRIPE_SECRET_KEY must be a Stripe secret key"},
		{"shop keys alone: real Stripe", map[string]string{"STRIPE_SECRET_KEYS": "london=sk_test_london123"}, DepositLink, StripeAPIURL, "", false, 2, ""},
		{"a shop key that is not one", map[string]string{"STRIPE_SECRET_KEYS": "london=pk_test_london123"}, "", "", "", false, 0, `the key of tenant "london" must be a Stripe secret key`},
		{"one key for two shops", map[string]string{"STRIPE_SECRET_KEYS": "london=sk_test_x123, nord=sk_test_x123"}, "", "", "", false, 0, `tenants "london" and "nord" have the same key`},
		{"a shop's key is the shared one", map[string]string{"STRIPE_SECRET_KEY": "sk_test_x123", "STRIPE_SECRET_KEYS": "london=sk_test_x123"}, "", "", "", false, 0, `the key of tenant "london" is STRIPE_SECRET_KEY's`},
		{"a shop listed twice", map[string]string{"STRIPE_SECRET_KEYS": "london=sk_test_a123,london=sk_test_b123"}, "", "", "", false, 0, `tenant "london" is listed twice`},
		{"not tenant=key", map[string]string{"STRIPE_SECRET_KEYS": "sk_test_a123"}, "", "", "", false, 0, "an entry is not tenant=sk_"},
		{"webhook secret must be whsec_", map[string]string{"STRIPE_WEBHOOK_SECRET": "hunter2"}, "", "", "", false, 0, "STRIPE_WEBHOOK_SECRET must be a whsec_ signing secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "123", "no key or secret in the message")
				require.NotContains(t, err.Error(), "hunter2")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.mode, c.DepositMode)
			require.Equal(t, tc.paymentsURL, c.PaymentsURL)
			require.Equal(t, tc.publicURL, c.PaymentsPublicURL)
			require.Equal(t, tc.authoritative, c.PaymentsAuthoritativeLookup)
			require.Len(t, c.OpsScrapeURLs, tc.scrapes)
		})
	}
}

// TestStripeKeyForAShop: a shop with an account of its own is called with
// its key, the others with the shared one; against real Stripe a shop
// with neither is refused with a message that says what to set, and
// against our own payment API it gets the worker's service token (empty).
func TestStripeKeyForAShop(t *testing.T) {
	load := func(env map[string]string) Config {
		c, err := Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		require.NoError(t, err)
		return c
	}
	both := load(map[string]string{"STRIPE_SECRET_KEY": "sk_test_shared", "STRIPE_SECRET_KEYS": "london=sk_test_london"})
	for tenant, want := range map[string]string{"london": "sk_test_london", "demo": "sk_test_shared"} {
		got, err := both.StripeKeyFor(tenant)
		require.NoError(t, err)
		require.Equal(t, want, got, tenant)
	}
	only := load(map[string]string{"STRIPE_SECRET_KEYS": "london=sk_test_london"})
	_, err := only.StripeKeyFor("demo")
	require.ErrorIs(t, err, ErrNoStripeKey)
	require.ErrorContains(t, err, "STRIPE_SECRET_KEYS")
	own := load(nil)
	got, err := own.StripeKeyFor("demo")
	require.NoError(t, err)
	require.Empty(t, got, "our own payment API: the service token")
}
