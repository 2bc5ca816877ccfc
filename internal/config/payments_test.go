package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAuthoritativeLookup: our payment API's search is authoritative by
// default, Stripe's never (its index lags writes), whatever is claimed.
func TestAuthoritativeLookup(t *testing.T) {
	cases := []struct {
		value, url string
		want       bool
		wantErr    bool
	}{
		{"", "http://127.0.0.1:8082", true, false},
		{"", "http://payments:8082", true, false},
		{"", "https://api.stripe.com", false, false},
		{"", "", false, false},
		{"false", "http://127.0.0.1:8082", false, false},
		{"true", "https://api.stripe.com", false, true},
		{"maybe", "http://127.0.0.1:8082", false, true},
	}
	for _, tc := range cases {
		got, err := authoritativeLookup(tc.value, tc.url)
		require.Equal(t, tc.wantErr, err != nil, "%q %q: %v", tc.value, tc.url, err)
		require.Equal(t, tc.want, got, "%q %q", tc.value, tc.url)
	}
}

// TestWebhookConfig: a configured webhook URL needs a signing secret.
func TestWebhookConfig(t *testing.T) {
	cases := []struct {
		name                string
		env                 map[string]string
		wantURL, wantSecret string
		wantTwice, wantErr  bool
	}{
		{"unset", nil, "", "", false, false},
		{"url and secret", map[string]string{"STRIPE_WEBHOOK_URL": "http://127.0.0.1:8080/webhooks/stripe", "STRIPE_WEBHOOK_SECRET": "whsec_abc"},
			"http://127.0.0.1:8080/webhooks/stripe", "whsec_abc", false, false},
		{"twice", map[string]string{"STRIPE_WEBHOOK_URL": "http://gw/webhooks/stripe", "STRIPE_WEBHOOK_SECRET": "whsec_abc", "STRIPE_WEBHOOK_DELIVER_TWICE": "true"},
			"http://gw/webhooks/stripe", "whsec_abc", true, false},
		{"url without secret", map[string]string{"STRIPE_WEBHOOK_URL": "http://gw/webhooks/stripe"}, "", "", false, true},
		{"not a url", map[string]string{"STRIPE_WEBHOOK_URL": "gw:8080", "STRIPE_WEBHOOK_SECRET": "whsec_abc"}, "", "", false, true},
		{"bad twice", map[string]string{"STRIPE_WEBHOOK_DELIVER_TWICE": "often"}, "", "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			require.Equal(t, tc.wantErr, err != nil, "%v", err)
			require.Equal(t, tc.wantURL, c.StripeWebhookURL)
			require.Equal(t, tc.wantSecret, c.StripeWebhookSecret)
			require.Equal(t, tc.wantTwice, c.StripeWebhookTwice)
		})
	}
}
