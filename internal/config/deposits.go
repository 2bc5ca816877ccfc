package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DepositMode is how bookings started from conversations take their
// deposit.
type DepositMode string

// Deposit modes (DEPOSIT_MODE).
const (
	// DepositLink sends the customer a payment link (a Checkout Session)
	// and waits for the provider's webhook: the default.
	DepositLink DepositMode = "link"
	// DepositCard authorises the lab's test card at once, without the
	// customer: for tests and demos of the saga alone.
	DepositCard DepositMode = "card"
)

// StripeAPIURL is Stripe's API, used when STRIPE_SECRET_KEY is set and
// PAYMENTS_URL is not.
const StripeAPIURL = "https://api.stripe.com"

// readDeposits reads DEPOSIT_MODE, PAYMENTS_PUBLIC_URL and
// STRIPE_SECRET_KEY, and decides which payment API the worker talks to:
//
//   - PAYMENTS_URL set: that URL, whatever else is set;
//   - PAYMENTS_URL unset, STRIPE_SECRET_KEY unset: our own payment API on
//     loopback (what `make run` serves);
//   - PAYMENTS_URL unset, STRIPE_SECRET_KEY set: real Stripe.
//
// The key's value never appears in an error.
func (c *Config) readDeposits(lookup func(string) (string, bool), get func(name, def string) string) []string {
	var errs []string
	switch mode := DepositMode(strings.ToLower(get("DEPOSIT_MODE", string(DepositLink)))); mode {
	case DepositLink, DepositCard:
		c.DepositMode = mode
	default:
		errs = append(errs, `DEPOSIT_MODE must be "link" or "card"`)
	}
	c.PaymentsPublicURL = strings.TrimRight(get("PAYMENTS_PUBLIC_URL", ""), "/")
	if c.PaymentsPublicURL != "" && !isHTTPURL(c.PaymentsPublicURL) {
		errs = append(errs, "PAYMENTS_PUBLIC_URL must be an http(s) URL such as https://pay.example.com")
	}
	c.StripeSecretKey = get("STRIPE_SECRET_KEY", "")
	if c.StripeSecretKey != "" && !stripeKey(c.StripeSecretKey) {
		errs = append(errs, "STRIPE_SECRET_KEY must be a Stripe secret key (sk_test_…, sk_live_… or a restricted rk_…)")
	}
	var err error
	if c.StripeSecretKeys, err = ParseStripeKeys(get("STRIPE_SECRET_KEYS", ""), c.StripeSecretKey); err != nil {
		errs = append(errs, err.Error())
	}
	if v, set := lookup("PAYMENTS_URL"); (!set || strings.TrimSpace(v) == "") && (c.StripeSecretKey != "" || len(c.StripeSecretKeys) > 0) {
		c.PaymentsURL = StripeAPIURL
	}
	return errs
}

// stripeKey is the form of a Stripe secret or restricted key.
func stripeKey(k string) bool {
	return (strings.HasPrefix(k, "sk_") || strings.HasPrefix(k, "rk_")) && len(k) > len("sk_")
}

// ParseStripeKeys parses STRIPE_SECRET_KEYS, "tenant=sk_…,tenant2=rk_…",
// into tenant -> the secret key of the tenant's own Stripe account. A key
// listed for two tenants, or equal to STRIPE_SECRET_KEY (shared), is
// refused: one shop's deposits would land in another's account. No
// message names a key.
func ParseStripeKeys(s, shared string) (map[string]string, error) {
	out := map[string]string{}
	owner := map[string]string{} // key -> tenant
	for pair := range strings.SplitSeq(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		tenant, key, ok := strings.Cut(pair, "=")
		tenant, key = strings.TrimSpace(tenant), strings.TrimSpace(key)
		switch {
		case !ok || !webhookTenant.MatchString(tenant):
			return nil, fmt.Errorf("STRIPE_SECRET_KEYS: an entry is not tenant=sk_… with a tenant ID of lower-case letters, digits, '-' and '_'")
		case !stripeKey(key):
			return nil, fmt.Errorf("STRIPE_SECRET_KEYS: the key of tenant %q must be a Stripe secret key (sk_test_…, sk_live_… or a restricted rk_…)", tenant)
		case out[tenant] != "":
			return nil, fmt.Errorf("STRIPE_SECRET_KEYS: tenant %q is listed twice", tenant)
		case owner[key] != "":
			return nil, fmt.Errorf("STRIPE_SECRET_KEYS: tenants %q and %q have the same key: one shop's deposits would go to the other's account", owner[key], tenant)
		case key == shared:
			return nil, fmt.Errorf("STRIPE_SECRET_KEYS: the key of tenant %q is STRIPE_SECRET_KEY's: list only the shops with an account of their own", tenant)
		}
		out[tenant], owner[key] = key, tenant
	}
	return out, nil
}

// ErrNoStripeKey: the worker calls real Stripe for a tenant that has no
// key of its own and there is no shared one.
var ErrNoStripeKey = errors.New("no Stripe secret key for this tenant")

// StripeKeyFor is the key the worker calls the payment provider with for
// tenant: its own (STRIPE_SECRET_KEYS), else STRIPE_SECRET_KEY. Empty:
// neither, which against our own payment API means the worker's minted
// service token, and against real Stripe is ErrNoStripeKey.
func (c Config) StripeKeyFor(tenant string) (string, error) {
	if k, ok := c.StripeSecretKeys[tenant]; ok {
		return k, nil
	}
	if c.StripeSecretKey == "" && c.PaymentsURL == StripeAPIURL {
		return "", fmt.Errorf("tenant %q: %w: add it to STRIPE_SECRET_KEYS or set STRIPE_SECRET_KEY", tenant, ErrNoStripeKey)
	}
	return c.StripeSecretKey, nil
}

// isHTTPURL reports whether u is an absolute http(s) URL with a host.
func isHTTPURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}
