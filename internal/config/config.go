// Package config reads bookonce's settings from the environment. Every
// variable has a development default so that `make run` needs none;
// docs/configuration.md lists them all in one table. The secrets among
// those defaults are published, so a process reachable from other hosts refuses them
// (CheckSecrets).
package config

import (
	"crypto/ed25519"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
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
	// TemporalClient holds how to connect beyond address and namespace:
	// TLS (a client certificate for mTLS, the server's CA and name) and
	// an API key as credentials, from the SDK's variables (TEMPORAL_TLS_*,
	// TEMPORAL_API_KEY, TEMPORAL_PROFILE). It carries secrets: never log
	// it; TemporalOptions is what to dial with.
	TemporalClient client.Options
	// TaskQueue is the task queue of the bookonce worker.
	TaskQueue string
	// Versioning is the worker's Worker Deployment and build
	// (WORKER_DEPLOYMENT, WORKER_BUILD_ID, WORKER_PROMOTE).
	Versioning Versioning
	// TemporalUIPort is the port of the embedded Temporal Web UI.
	TemporalUIPort int
	// TemporalDBSync is how the embedded server syncs its SQLite file,
	// "normal" or "full" (TemporalDBSyncVar).
	TemporalDBSync string

	// GatewayListen, CalendarListen and PaymentsListen are the listen
	// addresses of the three HTTP services.
	GatewayListen  string
	CalendarListen string
	PaymentsListen string
	// PaymentsAdminListen is the payment API's private listener: its
	// /metrics (tenant names and volumes) and detailed /healthz, apart
	// from PaymentsListen, which serves the hosted payment page to the
	// internet (loopback by default; keep it on a private network).
	PaymentsAdminListen string
	// CalendarAdminListen is the calendar API's private listener: its
	// /metrics (tenant names and volumes) and detailed /healthz, apart
	// from CalendarListen, which a shop's front desk may reach across the
	// internet (loopback by default; keep it on a private network).
	CalendarAdminListen string
	// AdminListen is the gateway's admin listener: the review and booking
	// APIs, the ops page and /metrics, apart from the public webhooks of
	// GatewayListen (loopback by default; put it behind a VPN or an
	// authenticating proxy, never on the internet).
	AdminListen string
	// AgentListen serves the AI agent tools (MCP at /mcp and the HTTP
	// variant under /v1/agent/tools); the gateway process runs it.
	AgentListen string
	// CalendarURL and PaymentsURL are where the worker reaches the APIs.
	CalendarURL string
	PaymentsURL string
	// PaymentsAuthoritativeLookup says whether the payment provider's
	// search by reference is consistent with its writes (our payment API:
	// yes; Stripe, whose search index lags: no). Only then does "not
	// found" prove absence, and may the saga try again under a new key.
	PaymentsAuthoritativeLookup bool
	// PaymentsSearchLag is PAYMENTS_SEARCH_LAG: our payment API's search
	// leaves out intents created less than this ago, as Stripe's lagging
	// index would (stripeapi.Server.SearchLag); 0, the default: consistent.
	// A lagging search is no authoritative lookup (authoritativeLookup).
	PaymentsSearchLag time.Duration
	// WebhookLoopback admits tenants' webhook endpoints on this machine's
	// loopback (at creation and at delivery). Not read from the
	// environment: make run sets it, since every endpoint a developer
	// registers there is on this machine. Link-local and private
	// addresses stay refused.
	WebhookLoopback bool
	// StripeWebhookURL, when set, receives every event of the payment API
	// of each tenant, signed with StripeWebhookSecret (whsec_...), the
	// secret the gateway verifies /webhooks/stripe with;
	// StripeWebhookTwice delivers each one twice on purpose (the drill).
	StripeWebhookURL, StripeWebhookSecret string
	StripeWebhookTwice                    bool
	// StripeWebhookSecrets are STRIPE_WEBHOOK_SECRETS: tenant -> the
	// whsec_ secret of the tenant's own endpoint (as of its own Stripe
	// account), which the gateway verifies /webhooks/stripe/<tenant>
	// with, and the payment API signs that tenant's configured endpoint
	// with (WebhookEndpoint). Never logged.
	StripeWebhookSecrets map[string]string
	// DepositMode is how conversations take deposits: payment links
	// (default) or the lab's test card (DEPOSIT_MODE).
	DepositMode DepositMode
	// PaymentsPublicURL is the base URL of the hosted payment page as
	// customers reach it; empty: the address the payment API is called on
	// (PAYMENTS_URL).
	PaymentsPublicURL string
	// StripeSecretKey, when set, is the key the worker calls the payment
	// provider with for every tenant; with PAYMENTS_URL unset it selects
	// real Stripe (StripeAPIURL). Never logged.
	StripeSecretKey string
	// StripeSecretKeys are STRIPE_SECRET_KEYS: tenant -> the secret key
	// of the tenant's own Stripe account, so that a shop's deposits go to
	// the shop (StripeKeyFor). Never logged.
	StripeSecretKeys map[string]string
	// GoogleClientID and GoogleClientSecret are bookonce's OAuth client at
	// Google (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET): each shop that
	// connects a Google calendar consents to it, and its refresh token
	// is a secret of SHOP_CALENDAR_SECRETS. The secret is never logged.
	GoogleClientID, GoogleClientSecret string
	// GoogleAPIURL (GOOGLE_API_URL) replaces Google's API and token hosts
	// (a fake or a proxy); empty: Google.
	GoogleAPIURL string
	// MicrosoftClientID and MicrosoftClientSecret are bookonce's app
	// registration at Microsoft Entra (MICROSOFT_CLIENT_ID, _SECRET),
	// used app-only in each shop's tenant that granted admin consent.
	// The secret is never logged.
	MicrosoftClientID, MicrosoftClientSecret string
	// MicrosoftAPIURL (MICROSOFT_API_URL) replaces graph.microsoft.com
	// and login.microsoftonline.com (a fake or a proxy); empty: Microsoft.
	MicrosoftAPIURL string
	// ShopCalendarPoll is SHOP_CALENDAR_POLL: how often the worker reads
	// the shops' own calendars for what staff entered (shopcal.Mirror).
	ShopCalendarPoll time.Duration
	// ShopCalendarSecrets are SHOP_CALENDAR_SECRETS: secret name -> the
	// password of a shop's own calendar, as tenants.yaml names it
	// (resources[].calendar.secret). Never logged.
	ShopCalendarSecrets map[string]string
	// VoicePlatformSecrets are VOICE_PLATFORM_SECRETS: tenant -> voice
	// platform (vapi) -> the secret its tool calls are signed with. Never
	// logged.
	VoicePlatformSecrets map[string]map[string]string
	// PublicBaseURL is the gateway's externally visible URL; Twilio signs
	// requests against it, and the shops' Google and Microsoft calendars
	// push their changes to it.
	PublicBaseURL string
	// ShopCalendarPush: the worker opens push channels on the shops'
	// Google and Microsoft calendars (shopcal.Push). On when
	// PublicBaseURL is HTTPS, the only URL they call; tests set it for
	// fakes on loopback.
	ShopCalendarPush bool

	// APITokens maps bearer token to tenant.
	APITokens map[string]string
	// TrustedProxies are TRUSTED_PROXIES: the reverse proxies (addresses
	// or CIDR ranges) whose X-Forwarded-For names the client a failed
	// authentication is counted against; unset: the connection's peer.
	TrustedProxies []netip.Prefix
	// TwilioAccountSID and TwilioAuthToken authenticate with Twilio and
	// verify its webhook signatures.
	TwilioAccountSID string
	TwilioAuthToken  string
	// TwilioFrom is the sender number of outbound messages; TwilioAPIURL
	// overrides Twilio's API base URL (empty: the real Twilio).
	TwilioFrom   string
	TwilioAPIURL string
	// CustomerIDKey is BOOKONCE_CUSTOMER_ID_KEY, the master secret of the
	// customer keys that stand for phone numbers in workflow IDs and
	// search attributes (package customerid). Never logged.
	CustomerIDKey string
	// OpsSessionSecret keys the ops page's session cookies and CSRF
	// tokens, OperationIDSecret signs the agent tools' operation IDs
	// (OPS_SESSION_SECRET, OPERATION_ID_SECRET): secrets of their own, so
	// that neither the Twilio token nor a tenants file's token digests
	// let anybody forge a session, and so that rotating one (everybody
	// signs in again) leaves the other (retries of bookings under way)
	// alone. Every gateway replica shares them; never logged.
	OpsSessionSecret  string
	OperationIDSecret string
	// ServiceKey is the seed of the worker's private key
	// (BOOKONCE_SERVICE_KEY), with which it mints the short-lived tokens
	// it calls the calendar and payment APIs with on a tenant's behalf;
	// ServicePublicKeys (BOOKONCE_SERVICE_PUBLIC_KEYS) are the keys those
	// APIs accept such tokens by, several while one is rotated; empty:
	// the configured key's own. Package servicetoken; never logged.
	ServiceKey        []byte
	ServicePublicKeys []ed25519.PublicKey

	// Timezone is the business time zone of opening hours and spoken times.
	Timezone *time.Location
	// IdempotencyTTL is how long idempotency keys are kept (the replay horizon).
	IdempotencyTTL time.Duration
	// KeysPerMinute caps new idempotency keys per tenant and minute, against
	// floods of unique keys (0: no cap).
	KeysPerMinute int
	// WorkerListen serves the worker's /healthz and /metrics.
	WorkerListen string
	// WorkflowCache is how many workflows the worker process keeps in
	// memory between their tasks (the SDK's sticky cache).
	WorkflowCache int
	// HoldTTL is how long a calendar hold lives before it expires.
	HoldTTL time.Duration
	// DedupWindow is how close in time two different wishes of one customer
	// must be to be reviewed as a potential duplicate.
	DedupWindow time.Duration
	// VoiceConfirmWait is VOICE_CONFIRM_WAIT: how long a caller whose wish
	// is being booked waits on the line for the outcome before being told
	// the confirmation follows by SMS.
	VoiceConfirmWait time.Duration
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
	// ReminderLead is REMINDER_LEAD: a booking's reminder due less than
	// this after its confirmation is not sent (unset: the lifecycle's
	// 1 h). Negative: reminders already due are sent at once, which the
	// chaos drill uses to see reminders although its slots are days away.
	ReminderLead time.Duration
	// PaymentDecisionTimeout is PAYMENT_DECISION_TIMEOUT: how long a
	// payment saga waits for its booking's decision before it checks that
	// the booking still runs (unset: derived from the booking's bounds,
	// about two weeks). The chaos drill sets seconds.
	PaymentDecisionTimeout time.Duration
	// Retention is BOOKONCE_RETENTION: personal data in the inbox, the
	// outbox and past intents older than this is redacted by the worker's
	// sweep (package retention).
	Retention time.Duration

	// LLMBaseURL, LLMAPIKey and LLMModel configure an OpenAI-compatible
	// extractor; with LLMBaseURL empty the deterministic rules are used.
	LLMBaseURL, LLMAPIKey, LLMModel string

	// DevSecretsAllowed lists the development secrets (and short tokens)
	// BOOKONCE_ALLOW_DEV_SECRETS=1 let a reachable process start with; the
	// process warns about them at start (DevSecretsWarning).
	DevSecretsAllowed []string
	// allowDevSecrets is BOOKONCE_ALLOW_DEV_SECRETS=1.
	allowDevSecrets bool

	// PayloadCodec encrypts Temporal payloads with the keys of
	// BOOKONCE_PAYLOAD_KEYS or BOOKONCE_PAYLOAD_KEYS_FILE (the first key
	// is current). Nil: payloads are stored in clear (the development
	// default).
	PayloadCodec *payloadcrypt.Codec
	// CodecOrigins are the browser origins (the Temporal Web UI's) allowed
	// to call the gateway's codec endpoint (CODEC_CORS_ORIGINS).
	CodecOrigins []string
	// CodecOperatorToken is CODEC_OPERATOR_TOKEN, the operators' bearer
	// token for the codec endpoint: it decodes every tenant's payloads
	// (and those under the master keys), where a tenant's ops session
	// decodes only its own. Empty: no caller decodes them all. Never logged.
	CodecOperatorToken string

	// LogFormat is "text" or "json"; LogLevel is debug, info, warn or error.
	LogFormat string
	LogLevel  string
}

// Defaults used when a variable is unset. They are exported so that tests
// and docs agree with the code.
const (
	DefaultTemporalAddress = "127.0.0.1:7233"
	// DefaultAdminListen keeps the staff's surface on this machine.
	DefaultAdminListen = "127.0.0.1:8090"
	DefaultTenant      = "demo"
	DefaultAPIToken    = apitoken.Dev
	// DevTwilioAuthToken is the development Twilio token: with it, `make
	// run` sends messages to an in-process fake of Twilio's API.
	DevTwilioAuthToken = "dev-twilio-auth-token"
	// DefaultPaymentsAdminListen keeps the payment API's metrics on this
	// machine.
	DefaultPaymentsAdminListen = "127.0.0.1:8092"
	// DefaultCalendarAdminListen keeps the calendar API's metrics on this
	// machine.
	DefaultCalendarAdminListen = "127.0.0.1:8093"
	// WorkflowCacheVar sizes the worker's workflow cache.
	WorkflowCacheVar = "WORKER_WORKFLOW_CACHE"
	// DefaultWorkflowCache: a booking's lifecycle waits for weeks between
	// tasks, so keeping every open one in memory (the SDK's 10,000) made
	// the worker grow with the open bookings; the sagas that run now
	// stay cached, and a lifecycle that wakes is replayed from its short
	// history.
	DefaultWorkflowCache = "500"
)

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Load(os.LookupEnv) }

// Load reads the configuration through lookup, so tests can supply a map.
// Every invalid variable is reported, not only the first.
func Load(lookup func(string) (string, bool)) (Config, error) {
	r := &reader{lookup: lookup}
	c := r.settings()
	r.derived(&c)
	if len(r.errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(r.errs, "; "))
	}
	return c, nil
}

// reader reads variables with their defaults and collects what is invalid.
type reader struct {
	lookup func(string) (string, bool)
	errs   []string
}

// get is the trimmed value of name, or def when it is unset or blank.
func (r *reader) get(name, def string) string {
	if v, ok := r.lookup(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// url is get without a trailing slash, so paths can be appended.
func (r *reader) url(name, def string) string { return strings.TrimRight(r.get(name, def), "/") }

// dur is a positive duration.
func (r *reader) dur(name, def string) time.Duration {
	d, err := time.ParseDuration(r.get(name, def))
	if err != nil || d <= 0 {
		r.fail(fmt.Sprintf("%s must be a positive duration such as %q", name, def))
	}
	return d
}

// num is an integer in [lo, hi]; msg says what is wanted.
func (r *reader) num(name, def string, lo, hi int, msg string) int {
	var n int
	if _, err := fmt.Sscanf(r.get(name, def), "%d", &n); err != nil || n < lo || n > hi {
		r.fail(name + " must be " + msg)
	}
	return n
}

func (r *reader) fail(msg string) { r.errs = append(r.errs, msg) }

// settings reads the variables that map one to one onto a field.
func (r *reader) settings() Config {
	return Config{
		DataDir:               r.get("BOOKONCE_DATA_DIR", ".data"),
		DatabaseURL:           r.get("DATABASE_URL", ""),
		TemporalAddress:       r.get("TEMPORAL_ADDRESS", DefaultTemporalAddress),
		TemporalNamespace:     r.get("TEMPORAL_NAMESPACE", "default"),
		TaskQueue:             r.get("TEMPORAL_TASK_QUEUE", "bookonce"),
		TemporalUIPort:        r.num("TEMPORAL_UI_PORT", "8233", 1, 65535, "a port number such as 8233"),
		GatewayListen:         r.get("GATEWAY_LISTEN", "127.0.0.1:8080"),
		CalendarListen:        r.get("CALENDAR_LISTEN", "127.0.0.1:8081"),
		PaymentsListen:        r.get("PAYMENTS_LISTEN", "127.0.0.1:8082"),
		AdminListen:           r.get("ADMIN_LISTEN", DefaultAdminListen),
		AgentListen:           r.get("AGENT_LISTEN", "127.0.0.1:8084"),
		CalendarURL:           r.url("CALENDAR_URL", "http://127.0.0.1:8081"),
		PaymentsURL:           r.url("PAYMENTS_URL", "http://127.0.0.1:8082"),
		PublicBaseURL:         r.url("PUBLIC_BASE_URL", "http://127.0.0.1:8080"),
		TwilioAccountSID:      r.get("TWILIO_ACCOUNT_SID", "ACdev00000000000000000000000000000"),
		TwilioAuthToken:       r.get("TWILIO_AUTH_TOKEN", DevTwilioAuthToken),
		TwilioFrom:            r.get("TWILIO_FROM", "+4930123456"),
		TwilioAPIURL:          r.url("TWILIO_API_URL", ""),
		GoogleClientID:        r.get("GOOGLE_CLIENT_ID", ""),
		GoogleClientSecret:    r.get("GOOGLE_CLIENT_SECRET", ""),
		GoogleAPIURL:          r.url("GOOGLE_API_URL", ""),
		MicrosoftClientID:     r.get("MICROSOFT_CLIENT_ID", ""),
		MicrosoftClientSecret: r.get("MICROSOFT_CLIENT_SECRET", ""),
		MicrosoftAPIURL:       r.url("MICROSOFT_API_URL", ""),
		CustomerIDKey:         r.get(customerid.Var, customerid.DevSecret),
		OpsSessionSecret:      r.get(string(SecretOpsSession), DevOpsSessionSecret),
		OperationIDSecret:     r.get(string(SecretOperationID), DevOperationIDSecret),
		IdempotencyTTL:        r.dur("IDEMPOTENCY_TTL", "72h"),
		KeysPerMinute:         r.num("IDEMPOTENCY_KEYS_PER_MINUTE", "6000", 0, math.MaxInt, "a number of keys, 0 for no cap"),
		HoldTTL:               r.dur("HOLD_TTL", "10m"),
		DedupWindow:           r.dur("DEDUP_WINDOW", "3m"),
		VoiceConfirmWait:      r.dur("VOICE_CONFIRM_WAIT", "6s"),
		OutboxSendTimeout:     r.dur("OUTBOX_SEND_TIMEOUT", "2m"),
		ReconcileInterval:     r.dur("RECONCILE_INTERVAL", "5m"),
		ShopCalendarPoll:      r.dur("SHOP_CALENDAR_POLL", "30s"),
		ReconcileGrace:        r.dur("RECONCILE_GRACE", "5m"),
		Retention:             r.dur("BOOKONCE_RETENTION", "720h"),
		WorkerListen:          r.get("WORKER_LISTEN", "127.0.0.1:8083"),
		WorkflowCache:         r.num(WorkflowCacheVar, DefaultWorkflowCache, 1, math.MaxInt32, "a number of workflows, at least 1"),
		LLMBaseURL:            r.url("LLM_BASE_URL", ""),
		LLMAPIKey:             r.get("LLM_API_KEY", ""),
		LLMModel:              r.get("LLM_MODEL", "gpt-4o-mini"),
		LogFormat:             r.get("LOG_FORMAT", "text"),
		LogLevel:              r.get("LOG_LEVEL", "info"),

		PaymentsAdminListen: r.get("PAYMENTS_ADMIN_LISTEN", DefaultPaymentsAdminListen),
		CalendarAdminListen: r.get("CALENDAR_ADMIN_LISTEN", DefaultCalendarAdminListen),
	}
}

// derived reads what depends on other settings or needs parsing of its own.
func (r *reader) derived(c *Config) {
	_, c.TemporalAddressSet = r.lookup("TEMPORAL_ADDRESS")
	c.ShopCalendarPush = strings.HasPrefix(c.PublicBaseURL, "https://")
	r.temporal(c)
	r.versioning(c)
	r.service(c)
	if err := c.readWebhook(r.get); err != nil {
		r.fail(err.Error())
	}
	r.errs = append(r.errs, c.readDeposits(r.lookup, r.get)...)
	if secrets, err := ParseShopCalendarSecrets(r.get("SHOP_CALENDAR_SECRETS", "")); err != nil {
		r.fail(err.Error())
	} else {
		c.ShopCalendarSecrets = secrets
	}
	if secrets, err := ParseVoicePlatformSecrets(r.get("VOICE_PLATFORM_SECRETS", "")); err != nil {
		r.fail(err.Error())
	} else {
		c.VoicePlatformSecrets = secrets
	}
	c.OpsScrapeURLs = scrapeURLs(r.get("OPS_SCRAPE_URLS", ""), *c)
	if v := r.get("REMINDER_LEAD", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			r.fail(fmt.Sprintf("REMINDER_LEAD must be a duration such as \"1h\" (negative: send reminders already due at once), got %q", v))
		}
		c.ReminderLead = d
	}
	if v := r.get("PAYMENT_DECISION_TIMEOUT", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			r.fail(fmt.Sprintf("PAYMENT_DECISION_TIMEOUT must be a positive duration such as \"30m\", got %q", v))
		}
		c.PaymentDecisionTimeout = d
	}
	var err error
	if c.PaymentsSearchLag, err = searchLag(r.get("PAYMENTS_SEARCH_LAG", "0")); err != nil {
		r.fail(err.Error())
	}
	if c.PaymentsAuthoritativeLookup, err = authoritativeLookup(r.get("PAYMENTS_AUTHORITATIVE_LOOKUP", ""), c.PaymentsURL, c.PaymentsSearchLag); err != nil {
		r.fail(err.Error())
	}
	if c.APITokens, err = ParseAPITokens(r.get("BOOKONCE_API_TOKENS", DefaultTenant+":"+DefaultAPIToken)); err != nil {
		r.fail(err.Error())
	}
	if c.TrustedProxies, err = ParseTrustedProxies(r.get("TRUSTED_PROXIES", "")); err != nil {
		r.fail(err.Error())
	}
	if c.Timezone, err = time.LoadLocation(r.get("BOOKONCE_TIMEZONE", "Europe/Berlin")); err != nil {
		r.fail(fmt.Sprintf("BOOKONCE_TIMEZONE: %v (use an IANA name such as Europe/Berlin)", err))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		r.fail(`LOG_FORMAT must be "text" or "json"`)
	}
	c.allowDevSecrets = r.get(AllowDevSecretsVar, "") == "1"
	if c.PayloadCodec, err = payloadcrypt.Load(r.lookup); err != nil {
		r.fail(err.Error())
	}
	if _, err := customerid.New(c.CustomerIDKey); err != nil {
		r.fail(err.Error())
	}
	c.CodecOrigins = codecOrigins(r.get("CODEC_CORS_ORIGINS", ""), c.TemporalUIPort)
	c.CodecOperatorToken = strings.TrimSpace(r.get("CODEC_OPERATOR_TOKEN", ""))
	if n := len(c.CodecOperatorToken); n > 0 && n < MinTokenLength {
		r.fail(fmt.Sprintf("CODEC_OPERATOR_TOKEN is shorter than %d characters: it decodes every tenant's payloads, use a random one (openssl rand -hex 32)", MinTokenLength))
	}
	r.errs = append(r.errs, listenersApart(*c)...)
	if err := llmInClear(c.LLMBaseURL, c.LLMAPIKey); err != nil {
		r.fail(err.Error())
	}
}

// llmInClear refuses an LLM API key sent over plain http to a host other
// than this machine: the key and every customer's message would cross the
// network in clear.
func llmInClear(base, key string) error {
	if base == "" || key == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("LLM_BASE_URL %q: %v", base, err)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err == nil && ip.IsLoopback()) || host == "localhost" {
		return nil
	}
	return fmt.Errorf("LLM_BASE_URL %q is not https: LLM_API_KEY and the customers' messages would travel in clear (http is allowed on loopback only)", base)
}

// listenersApart refuses listeners of one process that share an
// address: a process keys its services by address, so one would silently
// take over the other, and an admin surface on the public address would
// be served to the internet.
func listenersApart(c Config) []string {
	errs := apart("gateway", []listener{
		{"GATEWAY_LISTEN", c.GatewayListen}, {"ADMIN_LISTEN", c.AdminListen}, {"AGENT_LISTEN", c.AgentListen},
	})
	errs = append(errs, apart("payment API", []listener{
		{"PAYMENTS_LISTEN", c.PaymentsListen}, {"PAYMENTS_ADMIN_LISTEN", c.PaymentsAdminListen},
	})...)
	return append(errs, apart("calendar API", []listener{
		{"CALENDAR_LISTEN", c.CalendarListen}, {"CALENDAR_ADMIN_LISTEN", c.CalendarAdminListen},
	})...)
}

// listener is a listen variable and its address.
type listener struct{ name, addr string }

// apart reports every pair of one process's listeners that would take
// one port.
func apart(process string, ls []listener) []string {
	var errs []string
	for i := range ls {
		for _, o := range ls[i+1:] {
			if sameListener(ls[i].addr, o.addr) {
				errs = append(errs, fmt.Sprintf("%s and %s are both %s: each %s listener needs an address of its own (the admin one must stay private)", ls[i].name, o.name, o.addr, process))
			}
		}
	}
	return errs
}

// sameListener reports whether two listen addresses would take one port:
// the same port on the same host, or on any host where one is a wildcard.
func sameListener(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return a == b
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return pa == pb && (ha == hb || wild(ha) || wild(hb))
}

// ParseTrustedProxies parses TRUSTED_PROXIES: comma-separated addresses
// or CIDR ranges (10.0.0.0/8, 192.168.1.7).
func ParseTrustedProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %q is neither an address nor a CIDR range (e.g. 10.0.0.0/8)", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// codecOrigins parses CODEC_CORS_ORIGINS (comma-separated origins such
// as https://temporal-ui.example.com); unset: the embedded Web UI's.
func codecOrigins(v string, uiPort int) []string {
	if v == "" {
		return []string{fmt.Sprintf("http://127.0.0.1:%d", uiPort), fmt.Sprintf("http://localhost:%d", uiPort)}
	}
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// ParseAPITokens parses "tenant:token,tenant2:token2" into token -> tenant.
// A token that is not a bookonce API token (apitoken.Check) is refused
// here: the APIs would refuse it on every call.
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
		if err := apitoken.Check(token); err != nil {
			return nil, fmt.Errorf("BOOKONCE_API_TOKENS: the token of tenant %q: %w", tenant, err)
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
// Unset, it names the calendar and payment APIs' admin listeners and the
// worker as this configuration reaches them.
func scrapeURLs(v string, c Config) []string {
	switch v {
	case "none":
		return nil
	case "":
		worker := strings.Replace(c.WorkerListen, "0.0.0.0:", "127.0.0.1:", 1)
		if isStripe(c.PaymentsURL) { // Stripe has no /metrics of ours
			return []string{calendarMetricsURL(c), "http://" + worker + "/metrics"}
		}
		return []string{calendarMetricsURL(c), paymentsMetricsURL(c), "http://" + worker + "/metrics"}
	}
	var out []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// paymentsMetricsURL is the payment API's /metrics: on the host
// PAYMENTS_URL names, at the port of PAYMENTS_ADMIN_LISTEN (the public
// listener serves none).
func paymentsMetricsURL(c Config) string {
	return adminMetricsURL(c.PaymentsURL, c.PaymentsAdminListen, "8092") // DefaultPaymentsAdminListen's port
}

// calendarMetricsURL is the calendar API's /metrics: on the host
// CALENDAR_URL names, at the port of CALENDAR_ADMIN_LISTEN (the public
// listener serves none).
func calendarMetricsURL(c Config) string {
	return adminMetricsURL(c.CalendarURL, c.CalendarAdminListen, "8093") // DefaultCalendarAdminListen's port
}

// adminMetricsURL is the /metrics of an admin listener: on the host the
// API's URL names (loopback if none), at the admin listen address's port
// (defaultPort for an address without one).
func adminMetricsURL(apiURL, adminListen, defaultPort string) string {
	host := "127.0.0.1"
	if u, err := url.Parse(apiURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	port := defaultPort
	if _, p, err := net.SplitHostPort(adminListen); err == nil {
		port = p
	}
	return "http://" + net.JoinHostPort(host, port) + "/metrics"
}

// CustomerKeys is the Keyer of CustomerIDKey, which Load has checked.
func (c Config) CustomerKeys() *customerid.Keyer {
	k, err := customerid.New(c.CustomerIDKey)
	if err != nil { // a Config built in code without the key
		return customerid.Dev()
	}
	return k
}
