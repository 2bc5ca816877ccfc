package stripeapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/idempotency"
)

// webhookObject is a WebhookEndpoint on the wire; secret is shown only in
// the answer to its creation, as with Stripe.
type webhookObject struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	APIVersion    *string           `json:"api_version"`
	Application   *string           `json:"application"`
	Created       int64             `json:"created"`
	Description   *string           `json:"description"`
	EnabledEvents []string          `json:"enabled_events"`
	Livemode      bool              `json:"livemode"`
	Metadata      map[string]string `json:"metadata"`
	Secret        string            `json:"secret,omitempty"`
	Status        string            `json:"status"`
	URL           string            `json:"url"`
}

var createWebhookSpec = formSpec{scalars: []string{"url", "description"}, lists: []string{"enabled_events"}}

// createWebhookEndpoint is POST /v1/webhook_endpoints: from the next event
// on, every event of an enabled type is delivered to url, signed with the
// endpoint's secret.
func (s *Server) createWebhookEndpoint(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := s.txOf(w, r)
	if !ok {
		return
	}
	f, apiErr := readForm(r, createWebhookSpec)
	if apiErr == nil {
		apiErr = checkEndpoint(f, s.AllowLoopbackEndpoints)
	}
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	full, err := endpointsFull(ctx, tx, tenantOf(r))
	if err != nil {
		s.internalError(w, r, "count webhook endpoints", err)
		return
	}
	if full != nil {
		writeError(ctx, w, full)
		return
	}
	u, _ := f.str("url")
	desc, _ := f.str("description")
	o := &webhookObject{
		ID: newID("we_"), Object: "webhook_endpoint", Created: s.now().Unix(), Description: nullable(desc),
		EnabledEvents: f.lists["enabled_events"], Metadata: map[string]string{}, Secret: newID("whsec_"),
		Status: "enabled", URL: u,
	}
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (id, tenant_id, url, secret, enabled_events, description, created_at)
		VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7)`, o.ID, tenantOf(r), u, o.Secret, o.EnabledEvents, desc, s.now()); err != nil {
		s.internalError(w, r, "insert webhook endpoint", err)
		return
	}
	idempotency.SetResource(ctx, "webhook_endpoint", o.ID)
	writeJSON(w, http.StatusOK, o)
}

// MaxEndpoints is how many webhook endpoints a tenant may have (Stripe's
// own limit per account): each failing one is retried, so their number
// bounds what one tenant can cost every other.
const MaxEndpoints = 16

// endpointsFull refuses a tenant's endpoint beyond MaxEndpoints (nil:
// room for one more); the tenant's lock makes concurrent creates count
// one after another.
func endpointsFull(ctx context.Context, q querier, tenant string) (*apiError, error) {
	if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1))`, tenant); err != nil {
		return nil, err
	}
	var n int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1`, tenant).Scan(&n); err != nil {
		return nil, err
	}
	if n >= MaxEndpoints {
		return invalidRequest("url", "", fmt.Sprintf("You have reached the maximum of %d webhook endpoints; delete one first.", MaxEndpoints)), nil
	}
	return nil, nil
}

// checkEndpoint validates a new endpoint: its URL (http or https, and a
// host that may be public: publicHost) and its event types.
func checkEndpoint(f form, loopback bool) *apiError {
	u, ok := f.str("url")
	if !ok {
		return missingParam("url")
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return invalidRequest("url", "url_invalid", "Invalid URL: "+RedactedURL(u))
	}
	if !publicHost(p.Hostname(), loopback) {
		return invalidRequest("url", "url_invalid", "Invalid URL: URL must be publicly accessible ("+p.Hostname()+
			" is a loopback, private, link-local or reserved address). Forward events to your machine with a tunnel instead.")
	}
	events := f.lists["enabled_events"]
	if len(events) == 0 {
		return missingParam("enabled_events")
	}
	for _, e := range events {
		if e != "*" && !contains(eventTypes, e) {
			return invalidRequest("enabled_events", "", "Invalid enabled_events: "+e+" is not an event type this API sends")
		}
	}
	return nil
}

// configEndpointPrefix starts the IDs of endpoints from configuration.
const configEndpointPrefix = "we_config_"

// ConfigEndpoint is a webhook endpoint from configuration for one
// tenant: it receives every event type at URL, signed with Secret
// (STRIPE_WEBHOOK_URL and STRIPE_WEBHOOK_SECRET, or for a tenant with a
// secret of its own, STRIPE_WEBHOOK_URL/<tenant> and that secret).
// Configured is the STRIPE_WEBHOOK_URL that URL derives from ("": URL).
type ConfigEndpoint struct {
	Tenant, URL, Secret string
	Configured          string
}

// id derives a stable ID from the tenant and the configured URL, so a
// restart updates the endpoint (a rotated secret, the tenant's own route
// when it gets a secret of its own) instead of adding a second one that
// would double every event.
func (c ConfigEndpoint) id() string {
	base := c.Configured
	if base == "" {
		base = c.URL
	}
	sum := sha256.Sum256([]byte(c.Tenant + "\x00" + base))
	return configEndpointPrefix + hex.EncodeToString(sum[:12])
}

// ensureEndpoint creates or updates a configured endpoint; the events due
// to it are delivered to its URL with its secret as they stand then.
func ensureEndpoint(ctx context.Context, q querier, c ConfigEndpoint, now time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO webhook_endpoints (id, tenant_id, url, secret, enabled_events, description, created_at)
		VALUES ($1, $2, $3, $4, '{*}', 'from configuration', $5)
		ON CONFLICT (id) DO UPDATE SET secret = EXCLUDED.secret, url = EXCLUDED.url`, c.id(), c.Tenant, c.URL, c.Secret, now)
	if err != nil {
		return fmt.Errorf("webhook endpoint from configuration for tenant %s: %w", c.Tenant, err)
	}
	return nil
}

// SignatureHeader is the header Stripe signs webhooks in.
const SignatureHeader = "Stripe-Signature"

// sign computes Stripe's signature header: t=<unix>,v1=<hex HMAC-SHA256
// of "<unix>.<payload>" keyed with the whole whsec_ secret>.
func sign(payload []byte, secret string, at time.Time) string {
	t := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(t))
	mac.Write([]byte("."))
	mac.Write(payload)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
