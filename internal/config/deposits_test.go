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
