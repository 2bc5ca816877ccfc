package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAuthoritativeLookup: our payment API's search is authoritative by
// default, Stripe's never (its index lags writes), nor ours made to lag
// (PAYMENTS_SEARCH_LAG), whatever is claimed.
func TestAuthoritativeLookup(t *testing.T) {
	cases := []struct {
		value, url string
		lag        time.Duration
		want       bool
		wantErr    bool
	}{
		{"", "http://127.0.0.1:8082", 0, true, false},
		{"", "http://payments:8082", 0, true, false},
		{"", "https://api.stripe.com", 0, false, false},
		{"", "", 0, false, false},
		{"false", "http://127.0.0.1:8082", 0, false, false},
		{"true", "https://api.stripe.com", 0, false, true},
		{"maybe", "http://127.0.0.1:8082", 0, false, true},
		{"", "http://127.0.0.1:8082", time.Minute, false, false},
		{"false", "http://127.0.0.1:8082", time.Minute, false, false},
		{"true", "http://127.0.0.1:8082", time.Minute, false, true},
	}
	for _, tc := range cases {
		got, err := authoritativeLookup(tc.value, tc.url, tc.lag)
		require.Equal(t, tc.wantErr, err != nil, "%q %q %s: %v", tc.value, tc.url, tc.lag, err)
		require.Equal(t, tc.want, got, "%q %q %s", tc.value, tc.url, tc.lag)
	}
}

// TestSearchLagConfig: PAYMENTS_SEARCH_LAG is a Go duration, 0 (a
// consistent search) by default; a lag makes the lookup non-authoritative
// unless PAYMENTS_AUTHORITATIVE_LOOKUP contradicts it, which is an error.
func TestSearchLagConfig(t *testing.T) {
	cases := []struct {
		name          string
		env           map[string]string
		wantLag       time.Duration
		authoritative bool
		wantErr       string
	}{
		{"unset", nil, 0, true, ""},
		{"zero", map[string]string{"PAYMENTS_SEARCH_LAG": "0s"}, 0, true, ""},
		{"a minute", map[string]string{"PAYMENTS_SEARCH_LAG": "1m"}, time.Minute, false, ""},
		{"lag with lookup false", map[string]string{"PAYMENTS_SEARCH_LAG": "90s", "PAYMENTS_AUTHORITATIVE_LOOKUP": "false"}, 90 * time.Second, false, ""},
		{"lag with lookup true", map[string]string{"PAYMENTS_SEARCH_LAG": "90s", "PAYMENTS_AUTHORITATIVE_LOOKUP": "true"}, 0, false, "contradicts PAYMENTS_SEARCH_LAG"},
		{"no unit", map[string]string{"PAYMENTS_SEARCH_LAG": "60"}, 0, false, `PAYMENTS_SEARCH_LAG must be a duration`},
		{"not a duration", map[string]string{"PAYMENTS_SEARCH_LAG": "soon"}, 0, false, `PAYMENTS_SEARCH_LAG must be a duration`},
		{"negative", map[string]string{"PAYMENTS_SEARCH_LAG": "-1s"}, 0, false, `PAYMENTS_SEARCH_LAG must be a duration of 0 or more`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantLag, c.PaymentsSearchLag)
			require.Equal(t, tc.authoritative, c.PaymentsAuthoritativeLookup)
		})
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

// TestWebhookSecretsConfig: STRIPE_WEBHOOK_SECRETS gives tenants a
// whsec_ secret of their own; anything else is refused with a message
// that names the tenant, never a secret.
func TestWebhookSecretsConfig(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    map[string]string
		wantErr string
	}{
		{"unset", "", map[string]string{}, ""},
		{"two tenants", "demo=whsec_d, london = whsec_l ,", map[string]string{"demo": "whsec_d", "london": "whsec_l"}, ""},
		{"not a whsec_ secret", "london=sk_live_oops", nil, `the secret of tenant "london" must be a whsec_`},
		{"empty whsec_", "london=whsec_", nil, `the secret of tenant "london" must be a whsec_`},
		{"no tenant", "whsec_oops", nil, "is not tenant=whsec_"},
		{"not a tenant ID", "../demo=whsec_d", nil, "is not tenant=whsec_"},
		{"tenant twice", "demo=whsec_a,demo=whsec_b", nil, `tenant "demo" is listed twice`},
		{"one secret for two tenants", "demo=whsec_same,london=whsec_same", nil, `tenants "demo" and "london" have the same secret`},
		{"the shared secret", "london=whsec_shared", nil, `the secret of tenant "london" is STRIPE_WEBHOOK_SECRET's`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"STRIPE_WEBHOOK_SECRET": "whsec_shared", "STRIPE_WEBHOOK_SECRETS": tc.value}
			c, err := Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, "STRIPE_WEBHOOK_SECRETS: ")
				require.ErrorContains(t, err, tc.wantErr)
				for _, secret := range []string{"sk_live_oops", "whsec_oops", "whsec_a", "whsec_same", "whsec_shared", "whsec_d"} {
					require.NotContains(t, err.Error(), secret, "secrets are never in messages")
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c.StripeWebhookSecrets)
		})
	}
}

// TestWebhookEndpoint: a tenant with a secret of its own gets
// STRIPE_WEBHOOK_URL/<tenant> signed with it; the others share
// STRIPE_WEBHOOK_URL and STRIPE_WEBHOOK_SECRET.
func TestWebhookEndpoint(t *testing.T) {
	cases := []struct {
		name, url, tenant   string
		wantURL, wantSecret string
	}{
		{"shared", "http://gw:8080/webhooks/stripe", "demo", "http://gw:8080/webhooks/stripe", "whsec_shared"},
		{"own", "http://gw:8080/webhooks/stripe", "london", "http://gw:8080/webhooks/stripe/london", "whsec_london"},
		{"trailing slash", "http://gw:8080/webhooks/stripe/", "london", "http://gw:8080/webhooks/stripe/london", "whsec_london"},
		{"query kept", "https://proxy.example/hooks?via=lb", "london", "https://proxy.example/hooks/london?via=lb", "whsec_london"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"STRIPE_WEBHOOK_URL": tc.url, "STRIPE_WEBHOOK_SECRET": "whsec_shared", "STRIPE_WEBHOOK_SECRETS": "london=whsec_london"}
			c, err := Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			require.NoError(t, err)
			u, secret := c.WebhookEndpoint(tc.tenant)
			require.Equal(t, tc.wantURL, u)
			require.Equal(t, tc.wantSecret, secret)
		})
	}
}
