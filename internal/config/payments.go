package config

import (
	"fmt"
	"net/url"
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
// misses a new intent (payments.Server.SearchLag): a duration of 0 or more.
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

// readWebhook reads STRIPE_WEBHOOK_URL, STRIPE_WEBHOOK_SECRET and
// STRIPE_WEBHOOK_DELIVER_TWICE. A URL needs a whsec_ secret: an unsigned
// webhook would be accepted by nobody who checks, and by anybody who
// does not. The gateway verifies its /webhooks/stripe with the same
// secret, so a secret that is set must be a whsec_ one.
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
