// Package config reads bookonce's settings from the environment. Every
// variable has a safe development default so that `make run` needs none; the
// README lists them all in one table.
package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Config holds every setting of every bookonce process. A process reads only
// the fields it needs.
type Config struct {
	// DataDir holds the embedded Temporal server's SQLite file and a private
	// PostgreSQL cluster when one has to be started.
	DataDir string
	// DatabaseURL, when set, is the PostgreSQL connection string; otherwise
	// bookonce discovers or starts a server (see package postgres).
	DatabaseURL string

	// TemporalAddress is the frontend gRPC address of the Temporal cluster.
	TemporalAddress string
	// TemporalAddressSet reports whether TEMPORAL_ADDRESS was given, which
	// tells the dev command not to start its embedded server.
	TemporalAddressSet bool
	// TemporalNamespace is the namespace all workflows run in.
	TemporalNamespace string
	// TaskQueue is the task queue of the bookonce worker.
	TaskQueue string
	// TemporalUIPort is the port of the embedded Temporal Web UI.
	TemporalUIPort int

	// GatewayListen, CalendarListen and PaymentsListen are the listen
	// addresses of the three HTTP services.
	GatewayListen  string
	CalendarListen string
	PaymentsListen string
	// CalendarURL and PaymentsURL are where the worker reaches the APIs.
	CalendarURL string
	PaymentsURL string
	// PaymentsAuthoritativeLookup says whether the payment provider's
	// search by reference is consistent with its writes (our payment API:
	// yes; Stripe, whose search index lags: no). Only then does "not
	// found" prove absence, and may the saga try again under a new key.
	PaymentsAuthoritativeLookup bool
	// StripeWebhookURL, when set, receives every event of the payment API
	// of each tenant, signed with StripeWebhookSecret (whsec_...);
	// StripeWebhookTwice delivers each one twice on purpose (the drill).
	StripeWebhookURL, StripeWebhookSecret string
	StripeWebhookTwice                    bool
	// PublicBaseURL is the gateway's externally visible URL; Twilio signs
	// requests against it.
	PublicBaseURL string

	// APITokens maps bearer token to tenant.
	APITokens map[string]string
	// TwilioAccountSID and TwilioAuthToken authenticate with Twilio and
	// verify its webhook signatures.
	TwilioAccountSID string
	TwilioAuthToken  string
	// TwilioFrom is the sender number of outbound messages; TwilioAPIURL
	// overrides Twilio's API base URL (empty: the real Twilio).
	TwilioFrom   string
	TwilioAPIURL string

	// Timezone is the business time zone of opening hours and spoken times.
	Timezone *time.Location
	// IdempotencyTTL is how long idempotency keys are kept (the replay horizon).
	IdempotencyTTL time.Duration
	// KeysPerMinute caps new idempotency keys per tenant and minute, against
	// floods of unique keys (0: no cap).
	KeysPerMinute int
	// WorkerListen serves the worker's /healthz and /metrics.
	WorkerListen string
	// HoldTTL is how long a calendar hold lives before it expires.
	HoldTTL time.Duration
	// DedupWindow is how close in time two different wishes of one customer
	// must be to be reviewed as a potential duplicate.
	DedupWindow time.Duration
	// OpsScrapeURLs are the /metrics addresses of the other processes
	// whose counters the gateway's ops page shows (the idempotency layer
	// lives in the APIs, dedup and outbox in the workers).
	OpsScrapeURLs []string
	// OutboxSendTimeout is how long a message whose send was attempted
	// without a recorded answer waits before the relay reconciles it with
	// the provider (never re-sends it blindly).
	OutboxSendTimeout time.Duration
	// ReconcileInterval is how often the reconciler's schedule sweeps for
	// holds, bookings and authorisations whose saga ended without settling
	// them; ReconcileGrace leaves effects younger than that, or of a saga
	// closed more recently, alone.
	ReconcileInterval, ReconcileGrace time.Duration

	// LLMBaseURL, LLMAPIKey and LLMModel configure an OpenAI-compatible
	// extractor; with LLMBaseURL empty the deterministic rules are used.
	LLMBaseURL, LLMAPIKey, LLMModel string

	// LogFormat is "text" or "json"; LogLevel is debug, info, warn or error.
	LogFormat string
	LogLevel  string
}

// Defaults used when a variable is unset. They are exported so that tests
// and docs agree with the code.
const (
	DefaultTemporalAddress = "127.0.0.1:7233"
	DefaultTenant          = "demo"
	DefaultAPIToken        = "dev-token"
	// DevTwilioAuthToken is the development Twilio token: with it, `make
	// run` sends messages to an in-process fake of Twilio's API.
	DevTwilioAuthToken = "dev-twilio-auth-token"
)

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Load(os.LookupEnv) }

// Load reads the configuration through lookup, so tests can supply a map.
func Load(lookup func(string) (string, bool)) (Config, error) {
	get := func(name, def string) string {
		if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		return def
	}
	var errs []string
	dur := func(name, def string) time.Duration {
		d, err := time.ParseDuration(get(name, def))
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Sprintf("%s must be a positive duration such as %q", name, def))
		}
		return d
	}

	c := Config{
		DataDir:           get("BOOKONCE_DATA_DIR", ".data"),
		DatabaseURL:       get("DATABASE_URL", ""),
		TemporalAddress:   get("TEMPORAL_ADDRESS", DefaultTemporalAddress),
		TemporalNamespace: get("TEMPORAL_NAMESPACE", "default"),
		TaskQueue:         get("TEMPORAL_TASK_QUEUE", "bookonce"),
		GatewayListen:     get("GATEWAY_LISTEN", "127.0.0.1:8080"),
		CalendarListen:    get("CALENDAR_LISTEN", "127.0.0.1:8081"),
		PaymentsListen:    get("PAYMENTS_LISTEN", "127.0.0.1:8082"),
		CalendarURL:       strings.TrimRight(get("CALENDAR_URL", "http://127.0.0.1:8081"), "/"),
		PaymentsURL:       strings.TrimRight(get("PAYMENTS_URL", "http://127.0.0.1:8082"), "/"),
		PublicBaseURL:     strings.TrimRight(get("PUBLIC_BASE_URL", "http://127.0.0.1:8080"), "/"),
		TwilioAccountSID:  get("TWILIO_ACCOUNT_SID", "ACdev00000000000000000000000000000"),
		TwilioAuthToken:   get("TWILIO_AUTH_TOKEN", DevTwilioAuthToken),
		TwilioFrom:        get("TWILIO_FROM", "+4930123456"),
		TwilioAPIURL:      strings.TrimRight(get("TWILIO_API_URL", ""), "/"),
		IdempotencyTTL:    dur("IDEMPOTENCY_TTL", "72h"),
		HoldTTL:           dur("HOLD_TTL", "10m"),
		DedupWindow:       dur("DEDUP_WINDOW", "3m"),
		OutboxSendTimeout: dur("OUTBOX_SEND_TIMEOUT", "2m"),
		ReconcileInterval: dur("RECONCILE_INTERVAL", "5m"),
		ReconcileGrace:    dur("RECONCILE_GRACE", "5m"),
		WorkerListen:      get("WORKER_LISTEN", "127.0.0.1:8083"),
		LLMBaseURL:        strings.TrimRight(get("LLM_BASE_URL", ""), "/"),
		LLMAPIKey:         get("LLM_API_KEY", ""),
		LLMModel:          get("LLM_MODEL", "gpt-4o-mini"),
		LogFormat:         get("LOG_FORMAT", "text"),
		LogLevel:          get("LOG_LEVEL", "info"),
	}
	_, c.TemporalAddressSet = lookup("TEMPORAL_ADDRESS")
	c.OpsScrapeURLs = scrapeURLs(get("OPS_SCRAPE_URLS", ""), c)
	authoritative, lookupErr := authoritativeLookup(get("PAYMENTS_AUTHORITATIVE_LOOKUP", ""), c.PaymentsURL)
	if lookupErr != nil {
		errs = append(errs, lookupErr.Error())
	}
	c.PaymentsAuthoritativeLookup = authoritative
	if err := c.readWebhook(get); err != nil {
		errs = append(errs, err.Error())
	}

	if _, err := fmt.Sscanf(get("IDEMPOTENCY_KEYS_PER_MINUTE", "6000"), "%d", &c.KeysPerMinute); err != nil || c.KeysPerMinute < 0 {
		errs = append(errs, "IDEMPOTENCY_KEYS_PER_MINUTE must be a number of keys, 0 for no cap")
	}
	if _, err := fmt.Sscanf(get("TEMPORAL_UI_PORT", "8233"), "%d", &c.TemporalUIPort); err != nil || c.TemporalUIPort <= 0 || c.TemporalUIPort > 65535 {
		errs = append(errs, "TEMPORAL_UI_PORT must be a port number such as 8233")
	}

	tokens, err := ParseAPITokens(get("BOOKONCE_API_TOKENS", DefaultTenant+":"+DefaultAPIToken))
	if err != nil {
		errs = append(errs, err.Error())
	}
	c.APITokens = tokens

	loc, err := time.LoadLocation(get("BOOKONCE_TIMEZONE", "Europe/Berlin"))
	if err != nil {
		errs = append(errs, fmt.Sprintf("BOOKONCE_TIMEZONE: %v (use an IANA name such as Europe/Berlin)", err))
	}
	c.Timezone = loc

	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, `LOG_FORMAT must be "text" or "json"`)
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// ParseAPITokens parses "tenant:token,tenant2:token2" into token -> tenant.
func ParseAPITokens(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		tenant, token, ok := strings.Cut(pair, ":")
		if !ok || tenant == "" || token == "" {
			return nil, fmt.Errorf("BOOKONCE_API_TOKENS: %q is not tenant:token", pair)
		}
		if _, dup := out[token]; dup {
			return nil, fmt.Errorf("BOOKONCE_API_TOKENS: a token is listed twice")
		}
		out[token] = tenant
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("BOOKONCE_API_TOKENS: at least one tenant:token is required")
	}
	return out, nil
}

// TokenFor returns the API token of tenant, for processes (the worker) that
// call the APIs on a tenant's behalf.
func (c Config) TokenFor(tenant string) (string, bool) {
	tokens := make([]string, 0, len(c.APITokens))
	for tok := range c.APITokens {
		tokens = append(tokens, tok)
	}
	sort.Strings(tokens) // deterministic choice when a tenant has several tokens
	for _, tok := range tokens {
		if c.APITokens[tok] == tenant {
			return tok, true
		}
	}
	return "", false
}

// Tenants lists the tenants of BOOKONCE_API_TOKENS, sorted and unique: the
// reconciler sweeps each.
func (c Config) Tenants() []string {
	seen := map[string]bool{}
	var out []string
	for _, tenant := range c.APITokens {
		if !seen[tenant] {
			seen[tenant] = true
			out = append(out, tenant)
		}
	}
	sort.Strings(out)
	return out
}

// scrapeURLs parses OPS_SCRAPE_URLS (comma-separated; "none" for none).
// Unset, it names the calendar and payment APIs and the worker as this
// configuration reaches them.
func scrapeURLs(v string, c Config) []string {
	switch v {
	case "none":
		return nil
	case "":
		worker := strings.Replace(c.WorkerListen, "0.0.0.0:", "127.0.0.1:", 1)
		return []string{c.CalendarURL + "/metrics", c.PaymentsURL + "/metrics", "http://" + worker + "/metrics"}
	}
	var out []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
