package config_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/servicetoken"
)

// longToken is a secret of the accepted length.
const longToken = "0123456789abcdef0123456789abcdef"

// TestCheckSecrets: development secrets are refused only
// when a listen address or PUBLIC_BASE_URL is not loopback, and only for
// the secrets the process uses; BOOKONCE_ALLOW_DEV_SECRETS=1 lets them
// through with a warning.
func TestCheckSecrets(t *testing.T) {
	good := map[string]string{"BOOKONCE_API_TOKENS": "demo:" + tokA, "TWILIO_AUTH_TOKEN": "real-twilio-token", "BOOKONCE_CUSTOMER_ID_KEY": longToken,
		"OPS_SESSION_SECRET": longToken + "s", "OPERATION_ID_SECRET": longToken + "o", "BOOKONCE_SERVICE_KEY": strings.Repeat("ab", 32)}
	devPublic := servicetoken.EncodeKey(ed25519.NewKeyFromSeed(servicetoken.DevSeed[:]).Public().(ed25519.PublicKey))
	otherPublic := servicetoken.EncodeKey(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name    string
		env     map[string]string
		uses    []config.Secret
		wantErr []string // substrings; none: starts
		warned  bool
	}{
		{"dev defaults on loopback (make run)", nil, config.AllSecrets, nil, false},
		{"localhost and ::1 are loopback", map[string]string{"GATEWAY_LISTEN": "localhost:8080", "CALENDAR_LISTEN": "[::1]:8081", "PUBLIC_BASE_URL": "http://localhost:8080"}, config.AllSecrets, nil, false},
		{"dev defaults on 0.0.0.0", map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080"}, config.AllSecrets,
			[]string{"GATEWAY_LISTEN=0.0.0.0:8080", "BOOKONCE_API_TOKENS", "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", "TWILIO_AUTH_TOKEN", "BOOKONCE_ALLOW_DEV_SECRETS=1"}, false},
		{"empty host listens everywhere", map[string]string{"WORKER_LISTEN": ":8083"}, config.WorkerSecrets, []string{"WORKER_LISTEN=:8083", "TWILIO_AUTH_TOKEN"}, false},
		{"the calendar's admin listener off loopback is exposed", map[string]string{"CALENDAR_ADMIN_LISTEN": "0.0.0.0:8093"}, config.AllSecrets,
			[]string{"CALENDAR_ADMIN_LISTEN=0.0.0.0:8093", "BOOKONCE_API_TOKENS"}, false},
		{"agent tools reachable with the published operation ID secret", with(good, "AGENT_LISTEN", "0.0.0.0:8084", "OPERATION_ID_SECRET", config.DevOperationIDSecret), config.GatewaySecrets,
			[]string{"AGENT_LISTEN=0.0.0.0:8084", "OPERATION_ID_SECRET is the published development secret"}, false},
		{"admin listener reachable with the published ops session secret", with(good, "ADMIN_LISTEN", "0.0.0.0:8090", "OPS_SESSION_SECRET", config.DevOpsSessionSecret), config.GatewaySecrets,
			[]string{"ADMIN_LISTEN=0.0.0.0:8090", "OPS_SESSION_SECRET is the published development secret"}, false},
		{"a short signing secret", with(good, "ADMIN_LISTEN", "0.0.0.0:8090", "OPS_SESSION_SECRET", "abc"), config.GatewaySecrets,
			[]string{"OPS_SESSION_SECRET has fewer than 32 characters"}, false},
		{"public PUBLIC_BASE_URL", map[string]string{"PUBLIC_BASE_URL": "https://book.example.com"}, config.GatewaySecrets,
			[]string{"PUBLIC_BASE_URL=https://book.example.com", "TWILIO_AUTH_TOKEN"}, false},
		{"only the secrets a process uses", map[string]string{"CALENDAR_LISTEN": "0.0.0.0:8081", "BOOKONCE_SERVICE_PUBLIC_KEYS": otherPublic}, config.CalendarSecrets, nil, false},
		{"a worker reachable with the published service key", with(good, "WORKER_LISTEN", "0.0.0.0:8083", "BOOKONCE_SERVICE_KEY", hex.EncodeToString(servicetoken.DevSeed[:])), config.WorkerSecrets,
			[]string{"BOOKONCE_SERVICE_KEY is the published development key", "starter service-key"}, false},
		{"an API reachable that accepts the published service key", with(good, "PAYMENTS_LISTEN", "0.0.0.0:8082", "BOOKONCE_SERVICE_PUBLIC_KEYS", otherPublic+","+devPublic), config.PaymentsSecrets,
			[]string{"BOOKONCE_SERVICE_PUBLIC_KEYS accepts the published development key"}, false},
		{"real secrets on 0.0.0.0", with(good, "GATEWAY_LISTEN", "0.0.0.0:8080"), config.AllSecrets, nil, false},
		{"compose's old webhook secret", with(good, "PAYMENTS_LISTEN", "0.0.0.0:8082", "STRIPE_WEBHOOK_SECRET", config.DevStripeWebhookSecret),
			config.PaymentsSecrets, []string{"STRIPE_WEBHOOK_SECRET"}, false},
		{"a tenant's own webhook secret is compose's old one", with(good, "GATEWAY_LISTEN", "0.0.0.0:8080", "STRIPE_WEBHOOK_SECRETS", "london="+config.DevStripeWebhookSecret),
			config.GatewaySecrets, []string{`STRIPE_WEBHOOK_SECRETS gives tenant "london" the published`}, false},
		{"dev customer key on 0.0.0.0 (anybody could test a guessed number against an ID)", with(good, "GATEWAY_LISTEN", "0.0.0.0:8080", "BOOKONCE_CUSTOMER_ID_KEY", customerid.DevSecret),
			config.GatewaySecrets, []string{"BOOKONCE_CUSTOMER_ID_KEY is the published development secret"}, false},
		{"the worker does not use the customer key", with(good, "WORKER_LISTEN", "0.0.0.0:8083", "BOOKONCE_CUSTOMER_ID_KEY", customerid.DevSecret),
			config.WorkerSecrets, nil, false},
		{"override", map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080", "BOOKONCE_ALLOW_DEV_SECRETS": "1"}, config.AllSecrets, nil, true},
		{"override must be 1", map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080", "BOOKONCE_ALLOW_DEV_SECRETS": "yes"}, config.AllSecrets, []string{"TWILIO_AUTH_TOKEN"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.env))
			require.NoError(t, err)
			err = c.CheckSecrets(tc.uses...)
			if len(tc.wantErr) == 0 {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				for _, want := range tc.wantErr {
					require.Contains(t, err.Error(), want)
				}
				require.NotContains(t, err.Error(), "real-twilio-token", "secrets are never in messages")
			}
			w := c.DevSecretsWarning()
			require.Equal(t, tc.warned, w != "", w)
			if tc.warned {
				require.True(t, strings.Contains(w, "TWILIO_AUTH_TOKEN") && strings.Contains(w, "BOOKONCE_API_TOKENS"), w)
				require.NotContains(t, w, config.DevTwilioAuthToken, "the warning names variables, not values")
			}
		})
	}
}

// TestCheckTenantDigests: a registry that accepts the development token is
// refused when reachable, allowed with a warning under the override, and
// fine on loopback or without that digest.
func TestCheckTenantDigests(t *testing.T) {
	devDigest := "b7c6c853974f48cf9cd27e2c9675eb5f8822c7f263b53d5c57c4c00bddc71246" // printf %s bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI | sha256sum
	acceptsDev := func(d string) bool { return d == devDigest }
	cases := []struct {
		name    string
		env     map[string]string
		accepts func(string) bool
		wantErr bool
		warned  bool
	}{
		{"loopback", nil, acceptsDev, false, false},
		{"reachable", map[string]string{"PAYMENTS_LISTEN": "0.0.0.0:8082"}, acceptsDev, true, false},
		{"reachable, own tokens only", map[string]string{"PAYMENTS_LISTEN": "0.0.0.0:8082"}, func(string) bool { return false }, false, false},
		{"override", map[string]string{"PAYMENTS_LISTEN": "0.0.0.0:8082", "BOOKONCE_ALLOW_DEV_SECRETS": "1"}, acceptsDev, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.env))
			require.NoError(t, err)
			warning, err := c.CheckTenantDigests(tc.accepts)
			require.Equal(t, tc.wantErr, err != nil, err)
			if tc.wantErr {
				require.ErrorContains(t, err, "api_token_sha256")
			}
			require.Equal(t, tc.warned, warning != "", warning)
		})
	}
}

// TestCustomerIDKeyTooShort: a short master secret would make customer
// keys as guessable as the numbers; Load refuses it with what to do.
func TestCustomerIDKeyTooShort(t *testing.T) {
	_, err := config.Load(func(k string) (string, bool) {
		if k == customerid.Var {
			return "short", true
		}
		return "", false
	})
	require.ErrorContains(t, err, "BOOKONCE_CUSTOMER_ID_KEY must have at least 16 characters")
}

// TestClearDataWarning: a process reachable from other hosts without
// payload keys warns that personal data is stored in clear; with keys,
// or on loopback (make run), it does not.
func TestClearDataWarning(t *testing.T) {
	key := "k1:" + strings.Repeat("A", 43) + "="
	cases := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"loopback without keys (make run)", nil, false},
		{"reachable without keys", map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080"}, true},
		{"reachable with keys", map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080", "BOOKONCE_PAYLOAD_KEYS": key}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(env(tc.env))
			require.NoError(t, err)
			w := c.ClearDataWarning()
			if !tc.want {
				require.Empty(t, w)
				return
			}
			require.Contains(t, w, "GATEWAY_LISTEN=0.0.0.0:8080")
			require.Contains(t, w, "BOOKONCE_PAYLOAD_KEYS")
		})
	}
}
