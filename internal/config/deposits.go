package config

import (
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
	if c.StripeSecretKey != "" && !strings.HasPrefix(c.StripeSecretKey, "sk_") && !strings.HasPrefix(c.StripeSecretKey, "rk_") {
		errs = append(errs, "STRIPE_SECRET_KEY must be a Stripe secret key (sk_test_…, sk_live_… or a restricted rk_…)")
	}
	if v, set := lookup("PAYMENTS_URL"); (!set || strings.TrimSpace(v) == "") && c.StripeSecretKey != "" {
		c.PaymentsURL = StripeAPIURL
	}
	return errs
}

// isHTTPURL reports whether u is an absolute http(s) URL with a host.
func isHTTPURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}
