package config_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/config"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7233", c.TemporalAddress)
	require.False(t, c.TemporalAddressSet)
	require.Equal(t, "default", c.TemporalNamespace)
	require.Equal(t, map[string]string{"bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI": "demo"}, c.APITokens)
	require.Equal(t, "dev-twilio-auth-token", c.TwilioAuthToken)
	require.Equal(t, "http://127.0.0.1:8080", c.PublicBaseURL)
	require.False(t, c.ShopCalendarPush, "Google and Microsoft call only HTTPS")
	require.Equal(t, "Europe/Berlin", c.Timezone.String())
	require.Equal(t, 72*time.Hour, c.IdempotencyTTL)
	require.Equal(t, 8233, c.TemporalUIPort)
	require.Equal(t, "127.0.0.1:8092", c.PaymentsAdminListen, "the payment API's metrics stay on this machine")
	require.Equal(t, "127.0.0.1:8093", c.CalendarAdminListen, "the calendar API's metrics stay on this machine")
	require.Equal(t, 30*24*time.Hour, c.Retention)
	require.Equal(t, config.Versioning{Deployment: "bookonce", Promote: true}, c.Versioning, "unversioned until a build is named")
	require.False(t, c.Versioning.On())
	tok, ok := c.TokenFor("demo")
	require.True(t, ok)
	require.Equal(t, "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", tok)
}

// Two well-formed API tokens (package apitoken).
const (
	tokA = "bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI"
	tokB = "bkapi_LONDONGARAGETESTTOKEN22222T5EVU4A"
)

func TestOverridesAndErrors(t *testing.T) {
	c, err := config.Load(env(map[string]string{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_ALLOW_PLAINTEXT": "1", "BOOKONCE_API_TOKENS": "a:" + tokA + ", b:" + tokB, "PUBLIC_BASE_URL": "https://x.example/"}))
	require.NoError(t, err)
	require.True(t, c.TemporalAddressSet)
	require.Equal(t, map[string]string{tokA: "a", tokB: "b"}, c.APITokens)
	require.Equal(t, "https://x.example", c.PublicBaseURL)
	require.True(t, c.ShopCalendarPush)

	for name, e := range map[string]map[string]string{
		"bad ttl":      {"IDEMPOTENCY_TTL": "forever"},
		"negative ttl": {"HOLD_TTL": "-1m"},
		"bad tokens":   {"BOOKONCE_API_TOKENS": "no-colon"},
		"dup token":    {"BOOKONCE_API_TOKENS": "a:" + tokA + ",b:" + tokA},
		"hand-made":    {"BOOKONCE_API_TOKENS": "a:0123456789abcdef0123456789abcdef"},
		"bad zone":     {"BOOKONCE_TIMEZONE": "Mars/Olympus"},
		"bad format":   {"LOG_FORMAT": "xml"},
		"bad port":     {"TEMPORAL_UI_PORT": "http"},
		"no retention": {"BOOKONCE_RETENTION": "0s"},
		"bad db sync":  {"TEMPORAL_DB_SYNC": "sometimes"},
		"negative lag": {"PAYMENTS_SEARCH_LAG": "-1m"},
		"no decision":  {"PAYMENT_DECISION_TIMEOUT": "0s"},
		"bad decision": {"PAYMENT_DECISION_TIMEOUT": "soon"},
		"bad promote":  {"WORKER_PROMOTE": "always"},
		"no cache":     {"WORKER_WORKFLOW_CACHE": "0"},
		"dotted build": {"WORKER_BUILD_ID": "1.4.2"},
		"colon name":   {"WORKER_DEPLOYMENT": "shop:a"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Load(env(e))
			require.Error(t, err)
			for k := range e {
				require.Contains(t, err.Error(), k, "the message names the variable")
			}
		})
	}
}

// TestConfigTableDocumentsEveryVariable reads every variable Load looks up and
// requires a row for it in the configuration table (docs/configuration.md).
func TestConfigTableDocumentsEveryVariable(t *testing.T) {
	looked := map[string]bool{}
	_, err := config.Load(func(k string) (string, bool) { looked[k] = true; return "", false })
	require.NoError(t, err)
	md, err := os.ReadFile("../../docs/configuration.md")
	require.NoError(t, err)
	for k := range looked {
		require.Contains(t, string(md), "| `"+k+"` |", "docs/configuration.md lacks a row for %s", k)
	}
	require.Len(t, looked, 85, "a new variable needs a row in docs/configuration.md and this count") // TEMPORAL_{WORKER_BUILD_ID,DEPLOYMENT_NAME} + WORKER_WORKFLOW_CACHE + WORKER_{BUILD_ID,DEPLOYMENT,PROMOTE} + VOICE_PLATFORM_SECRETS + MICROSOFT_{CLIENT_ID,CLIENT_SECRET,API_URL} + GOOGLE_{CLIENT_ID,CLIENT_SECRET,API_URL} + SHOP_CALENDAR_POLL + SHOP_CALENDAR_SECRETS + STRIPE_SECRET_KEYS + PAYMENT_DECISION_TIMEOUT + BOOKONCE_SERVICE_KEY, BOOKONCE_SERVICE_PUBLIC_KEYS + CALENDAR_ADMIN_LISTEN + CODEC_OPERATOR_TOKEN + STRIPE_WEBHOOK_SECRETS + PAYMENTS_ADMIN_LISTEN + OPS_SESSION_SECRET, OPERATION_ID_SECRET + TEMPORAL_ALLOW_PLAINTEXT + VOICE_CONFIRM_WAIT + 33 + STRIPE_WEBHOOK_{URL,SECRET,DELIVER_TWICE} + PAYMENTS_SEARCH_LAG + DEPOSIT_MODE, PAYMENTS_PUBLIC_URL, STRIPE_SECRET_KEY + BOOKONCE_ALLOW_DEV_SECRETS + AGENT_LISTEN + REMINDER_LEAD + ADMIN_LISTEN + TEMPORAL_{API_KEY,PROFILE,CONFIG_FILE,TLS_CLIENT_CERT_PATH,TLS_CLIENT_KEY_PATH,TLS_SERVER_CA_CERT_PATH,TLS_SERVER_NAME} + BOOKONCE_PAYLOAD_KEYS{,_FILE}, CODEC_CORS_ORIGINS + BOOKONCE_RETENTION + BOOKONCE_CUSTOMER_ID_KEY + TEMPORAL_DB_SYNC + TRUSTED_PROXIES
}

// TestOpsScrapeURLs: unset, the ops page reads the processes this
// configuration reaches; "none" reads none; a list is taken as given.
func TestOpsScrapeURLs(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"http://127.0.0.1:8093/metrics", "http://127.0.0.1:8092/metrics", "http://127.0.0.1:8083/metrics"}},
		{map[string]string{"WORKER_LISTEN": "0.0.0.0:9000", "CALENDAR_URL": "http://cal:1/"}, []string{"http://cal:8093/metrics", "http://127.0.0.1:8092/metrics", "http://127.0.0.1:9000/metrics"}},
		// The APIs' metrics are on their admin ports, on the hosts the worker reaches them at.
		{map[string]string{"PAYMENTS_URL": "http://payments:8082", "PAYMENTS_ADMIN_LISTEN": "0.0.0.0:9092"}, []string{"http://127.0.0.1:8093/metrics", "http://payments:9092/metrics", "http://127.0.0.1:8083/metrics"}},
		{map[string]string{"CALENDAR_URL": "http://calendar:8081", "CALENDAR_ADMIN_LISTEN": "0.0.0.0:9093"}, []string{"http://calendar:9093/metrics", "http://127.0.0.1:8092/metrics", "http://127.0.0.1:8083/metrics"}},
		{map[string]string{"OPS_SCRAPE_URLS": "none"}, nil},
		{map[string]string{"OPS_SCRAPE_URLS": " http://w1:8083/metrics, ,http://w2:8083/metrics"}, []string{"http://w1:8083/metrics", "http://w2:8083/metrics"}},
	} {
		cfg, err := config.Load(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		require.NoError(t, err)
		require.Equal(t, tc.want, cfg.OpsScrapeURLs, "%v", tc.env)
	}
}

// TestReconcilerDefaultsAndTenants: the reconciler sweeps every few minutes
// by default, and every tenant of BOOKONCE_API_TOKENS once.
func TestReconcilerDefaultsAndTenants(t *testing.T) {
	env := map[string]string{"BOOKONCE_API_TOKENS": "b:" + tokA + ",a:" + tokB + ",b:" + apitoken.New()}
	c, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, c.ReconcileInterval)
	require.Equal(t, 5*time.Minute, c.ReconcileGrace)
	require.Equal(t, []string{"a", "b"}, c.Tenants())
	env["RECONCILE_INTERVAL"] = "0s"
	_, err = config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.ErrorContains(t, err, "RECONCILE_INTERVAL")
}

// TestReminderLead: unset leaves the lifecycle's default (zero), a
// negative lead is allowed (the chaos drill's), a bad one is named.
func TestReminderLead(t *testing.T) {
	cases := []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"", 0, ""},
		{"5m", 5 * time.Minute, ""},
		{"-8760h", -8760 * time.Hour, ""},
		{"soon", 0, "REMINDER_LEAD"},
	}
	for _, tc := range cases {
		env := map[string]string{}
		if tc.value != "" {
			env["REMINDER_LEAD"] = tc.value
		}
		c, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.ReminderLead, tc.value)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"10.0.0.0/8, 192.168.1.7 ,::1", []string{"10.0.0.0/8", "192.168.1.7/32", "::1/128"}, ""},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}, ""},
		{"ingress.local", nil, `"ingress.local" is neither an address nor a CIDR range`},
	} {
		got, err := config.ParseTrustedProxies(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		require.Equal(t, c.want, s, c.in)
	}
}

// TestGatewayListenersMustDiffer: an admin listener on the public
// address would serve the ops page and the review API (the gateway's) or
// the payment or calendar API's /metrics to the internet; the configuration refuses
// it instead of letting one listener win.
func TestGatewayListenersMustDiffer(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		err  string
	}{
		{map[string]string{}, ""},
		{map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080", "ADMIN_LISTEN": "0.0.0.0:8090"}, ""},
		{map[string]string{"GATEWAY_LISTEN": "0.0.0.0:8080", "ADMIN_LISTEN": "0.0.0.0:8080"}, "GATEWAY_LISTEN and ADMIN_LISTEN are both"},
		{map[string]string{"GATEWAY_LISTEN": ":8080", "ADMIN_LISTEN": "127.0.0.1:8080"}, "GATEWAY_LISTEN and ADMIN_LISTEN are both"},
		{map[string]string{"AGENT_LISTEN": "127.0.0.1:8090"}, "ADMIN_LISTEN and AGENT_LISTEN are both"},
		{map[string]string{"PAYMENTS_LISTEN": "0.0.0.0:8082", "PAYMENTS_ADMIN_LISTEN": "0.0.0.0:8092"}, ""},
		{map[string]string{"PAYMENTS_LISTEN": "0.0.0.0:8082", "PAYMENTS_ADMIN_LISTEN": "127.0.0.1:8082"}, "PAYMENTS_LISTEN and PAYMENTS_ADMIN_LISTEN are both"},
		{map[string]string{"PAYMENTS_ADMIN_LISTEN": "127.0.0.1:8082"}, "PAYMENTS_LISTEN and PAYMENTS_ADMIN_LISTEN are both"},
		{map[string]string{"CALENDAR_LISTEN": "0.0.0.0:8081", "CALENDAR_ADMIN_LISTEN": "0.0.0.0:8093"}, ""},
		{map[string]string{"CALENDAR_LISTEN": "0.0.0.0:8081", "CALENDAR_ADMIN_LISTEN": "127.0.0.1:8081"}, "CALENDAR_LISTEN and CALENDAR_ADMIN_LISTEN are both"},
		{map[string]string{"CALENDAR_ADMIN_LISTEN": "127.0.0.1:8081"}, "CALENDAR_LISTEN and CALENDAR_ADMIN_LISTEN are both"},
	} {
		_, err := config.Load(func(k string) (string, bool) { v, ok := c.vars[k]; return v, ok })
		if c.err == "" {
			require.NoError(t, err, c.vars)
			continue
		}
		require.ErrorContains(t, err, c.err, c.vars)
	}
}

// TestLLMKeyNeverInClear: an LLM API key is sent over https, or over
// plain http to this machine only.
func TestLLMKeyNeverInClear(t *testing.T) {
	for _, c := range []struct {
		base, key string
		ok        bool
	}{
		{"https://api.openai.com/v1", "sk-1", true},
		{"http://127.0.0.1:11434/v1", "sk-1", true},
		{"http://localhost:11434/v1", "sk-1", true},
		{"http://llm.internal:8000/v1", "", true},
		{"http://llm.internal:8000/v1", "sk-1", false},
		{"http://10.0.0.7/v1", "sk-1", false},
	} {
		_, err := config.Load(func(k string) (string, bool) {
			switch k {
			case "LLM_BASE_URL":
				return c.base, true
			case "LLM_API_KEY":
				return c.key, c.key != ""
			}
			return "", false
		})
		if c.ok {
			require.NoError(t, err, c.base)
		} else {
			require.ErrorContains(t, err, "LLM_BASE_URL", c.base)
			require.NotContains(t, err.Error(), c.key, "the key is never in the message")
		}
	}
}

// TestShopCalendarSecretsAreReadWithoutEchoingThem: SHOP_CALENDAR_SECRETS
// is JSON (a password may hold a comma or an equals sign); a malformed one
// is refused without its values in the message.
func TestShopCalendarSecretsAreReadWithoutEchoingThem(t *testing.T) {
	got, err := config.ParseShopCalendarSecrets(`{"werkstatt-dav": "pa,ss=wört"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"werkstatt-dav": "pa,ss=wört"}, got)
	for _, raw := range []string{`werkstatt-dav=geheim`, `{"Werkstatt DAV": "geheim"}`, `{"werkstatt-dav": ""}`} {
		_, err := config.ParseShopCalendarSecrets(raw)
		require.Error(t, err, raw)
		require.NotContains(t, err.Error(), "geheim")
	}
	none, err := config.ParseShopCalendarSecrets("")
	require.NoError(t, err)
	require.Nil(t, none)
}

// TestVoicePlatformSecretsAreReadWithoutEchoingThem: VOICE_PLATFORM_SECRETS
// is tenant -> platform -> secret; an unknown platform, a short secret or
// one two tenants share is refused, and no message names a secret.
func TestVoicePlatformSecretsAreReadWithoutEchoingThem(t *testing.T) {
	const secret = "geheim-0123456789abcdef-geheim"
	got, err := config.ParseVoicePlatformSecrets(`{"demo": {"vapi": "` + secret + `"}}`)
	require.NoError(t, err)
	cfg := config.Config{VoicePlatformSecrets: got}
	s, ok := cfg.VoicePlatformSecret("demo", "vapi")
	require.True(t, ok)
	require.Equal(t, secret, s)
	_, ok = cfg.VoicePlatformSecret("nord", "vapi")
	require.False(t, ok)
	for name, raw := range map[string]string{
		"not JSON":         `demo:vapi=` + secret,
		"unknown platform": `{"demo": {"vappi": "` + secret + `"}}`,
		"short":            `{"demo": {"vapi": "geheim"}}`,
		"shared":           `{"demo": {"vapi": "` + secret + `"}, "nord": {"vapi": "` + secret + `"}}`,
		"not a tenant ID":  `{"Demo Shop": {"vapi": "` + secret + `"}}`,
	} {
		_, err := config.ParseVoicePlatformSecrets(raw)
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "geheim", name)
	}
}

// TestVersioningFromWorkerOrController: the worker's own variables name
// its build; under the Temporal Worker Controller, the variables the
// controller sets in its pods do, and the controller routes.
func TestVersioningFromWorkerOrController(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want config.Versioning
	}{
		"own build": {map[string]string{"WORKER_BUILD_ID": "b7"},
			config.Versioning{Deployment: "bookonce", BuildID: "b7", Promote: true}},
		"controller": {map[string]string{"TEMPORAL_WORKER_BUILD_ID": "v1-5f9c", "TEMPORAL_DEPLOYMENT_NAME": "bookonce/bookonce-worker"},
			config.Versioning{Deployment: "bookonce/bookonce-worker", BuildID: "v1-5f9c"}},
		"own build wins": {map[string]string{"WORKER_BUILD_ID": "b7", "TEMPORAL_WORKER_BUILD_ID": "v1-5f9c", "TEMPORAL_DEPLOYMENT_NAME": "x/y"},
			config.Versioning{Deployment: "bookonce", BuildID: "b7", Promote: true}},
		"controller, promoting anyway": {map[string]string{"TEMPORAL_WORKER_BUILD_ID": "v1-5f9c", "TEMPORAL_DEPLOYMENT_NAME": "bookonce/w", "WORKER_PROMOTE": "new"},
			config.Versioning{Deployment: "bookonce/w", BuildID: "v1-5f9c", Promote: true}},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(env(tc.env))
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Versioning)
		})
	}
}
