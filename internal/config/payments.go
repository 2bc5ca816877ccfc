package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// authoritativeLookup reads PAYMENTS_AUTHORITATIVE_LOOKUP. Unset, it is
// true for our own payment API and false for Stripe (PAYMENTS_URL on
// stripe.com), whose search index lags writes, or for our API made to lag
// like it (searchLag > 0, PAYMENTS_SEARCH_LAG). Set, it is taken as given,
// except that a lagging search is never authoritative: claiming so would
// let the saga authorise a card twice under a second key.
func authoritativeLookup(value, paymentsURL string, searchLag time.Duration) (bool, error) {
	stripe := isStripe(paymentsURL)
	if value == "" {
		return !stripe && searchLag == 0, nil
	}
	v, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("PAYMENTS_AUTHORITATIVE_LOOKUP must be true or false")
	}
	if v && stripe {
		return false, fmt.Errorf("PAYMENTS_AUTHORITATIVE_LOOKUP=true is wrong for Stripe (%s): its search lags writes", paymentsURL)
	}
	if v && searchLag > 0 {
		return false, fmt.Errorf("PAYMENTS_AUTHORITATIVE_LOOKUP=true contradicts PAYMENTS_SEARCH_LAG=%s: a search that lags writes proves no absence", searchLag)
	}
	return v, nil
}

// searchLag reads PAYMENTS_SEARCH_LAG, how long the payment API's search
// misses a new intent (stripeapi.Server.SearchLag): a duration of 0 or more.
func searchLag(value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("PAYMENTS_SEARCH_LAG must be a duration of 0 or more such as \"1m\" (0: search is consistent), got %q", value)
	}
	return d, nil
}

// isStripe reports whether u is Stripe's API (or empty, which the gateway
// reads as Stripe).
func isStripe(u string) bool {
	if u == "" {
		return true
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := strings.ToLower(parsed.Hostname())
	return host == "stripe.com" || strings.HasSuffix(host, ".stripe.com")
}

// readWebhook reads STRIPE_WEBHOOK_URL, STRIPE_WEBHOOK_SECRET,
// STRIPE_WEBHOOK_SECRETS and STRIPE_WEBHOOK_DELIVER_TWICE. A URL needs a
// whsec_ secret: an unsigned webhook would be accepted by nobody who
// checks, and by anybody who does not. The gateway verifies its
// /webhooks/stripe with the same secret, so a secret that is set must be
// a whsec_ one.
func (c *Config) readWebhook(get func(name, def string) string) error {
	c.StripeWebhookURL = get("STRIPE_WEBHOOK_URL", "")
	c.StripeWebhookSecret = get("STRIPE_WEBHOOK_SECRET", "")
	twice, err := strconv.ParseBool(get("STRIPE_WEBHOOK_DELIVER_TWICE", "false"))
	if err != nil {
		return fmt.Errorf("STRIPE_WEBHOOK_DELIVER_TWICE must be true or false")
	}
	c.StripeWebhookTwice = twice
	if c.StripeWebhookSecret != "" && !strings.HasPrefix(c.StripeWebhookSecret, "whsec_") {
		return fmt.Errorf("STRIPE_WEBHOOK_SECRET must be a whsec_ signing secret")
	}
	if c.StripeWebhookSecrets, err = ParseWebhookSecrets(get("STRIPE_WEBHOOK_SECRETS", ""), c.StripeWebhookSecret); err != nil {
		return err
	}
	if c.StripeWebhookURL == "" {
		return nil
	}
	if u, err := url.Parse(c.StripeWebhookURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("STRIPE_WEBHOOK_URL must be an http(s) URL")
	}
	if !strings.HasPrefix(c.StripeWebhookSecret, "whsec_") {
		return fmt.Errorf("STRIPE_WEBHOOK_SECRET must be a whsec_ signing secret when STRIPE_WEBHOOK_URL is set")
	}
	return nil
}

// webhookTenant is the form of a tenant ID (tenants.yaml's): safe as a
// path segment of the tenant's webhook route.
var webhookTenant = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ParseWebhookSecrets parses STRIPE_WEBHOOK_SECRETS, "tenant=whsec_…,
// tenant2=whsec_…", into tenant -> the signing secret of the tenant's own
// webhook endpoint (its own Stripe account's). A secret shared by two
// tenants, or with STRIPE_WEBHOOK_SECRET (shared), is refused: whoever
// holds it could sign events for the other. No message names a secret.
func ParseWebhookSecrets(s, shared string) (map[string]string, error) {
	out := map[string]string{}
	owner := map[string]string{} // secret -> tenant
	for pair := range strings.SplitSeq(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		tenant, secret, ok := strings.Cut(pair, "=")
		tenant, secret = strings.TrimSpace(tenant), strings.TrimSpace(secret)
		switch {
		case !ok || !webhookTenant.MatchString(tenant):
			return nil, fmt.Errorf("STRIPE_WEBHOOK_SECRETS: an entry is not tenant=whsec_… with a tenant ID of lower-case letters, digits, '-' and '_'")
		case !strings.HasPrefix(secret, "whsec_") || len(secret) == len("whsec_"):
			return nil, fmt.Errorf("STRIPE_WEBHOOK_SECRETS: the secret of tenant %q must be a whsec_ signing secret", tenant)
		case out[tenant] != "":
			return nil, fmt.Errorf("STRIPE_WEBHOOK_SECRETS: tenant %q is listed twice", tenant)
		case owner[secret] != "":
			return nil, fmt.Errorf("STRIPE_WEBHOOK_SECRETS: tenants %q and %q have the same secret: each could sign the other's events", owner[secret], tenant)
		case secret == shared:
			return nil, fmt.Errorf("STRIPE_WEBHOOK_SECRETS: the secret of tenant %q is STRIPE_WEBHOOK_SECRET's: give the tenant its own endpoint's secret", tenant)
		}
		out[tenant], owner[secret] = secret, tenant
	}
	return out, nil
}

// WebhookEndpoint is the payment API's configured endpoint for tenant:
// STRIPE_WEBHOOK_URL signed with STRIPE_WEBHOOK_SECRET, or for a tenant
// with its own secret in STRIPE_WEBHOOK_SECRETS, STRIPE_WEBHOOK_URL/<tenant>
// signed with that secret (the gateway's /webhooks/stripe/{tenant} when
// the URL is its /webhooks/stripe), as with an account of its own.
func (c Config) WebhookEndpoint(tenant string) (endpoint, secret string) {
	own, ok := c.StripeWebhookSecrets[tenant]
	if !ok {
		return c.StripeWebhookURL, c.StripeWebhookSecret
	}
	u, err := url.JoinPath(c.StripeWebhookURL, tenant)
	if err != nil { // Load refuses such a URL; the shared route then keeps the events from the tenant
		return c.StripeWebhookURL, c.StripeWebhookSecret
	}
	return u, own
}
