package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// authoritativeLookup reads PAYMENTS_AUTHORITATIVE_LOOKUP. Unset, it is
// true for our own payment API and false for Stripe (PAYMENTS_URL on
// stripe.com), whose search index lags writes. Set, it is taken as given,
// except that Stripe is never authoritative: claiming so would let the
// saga authorise a card twice under a second key.
func authoritativeLookup(value, paymentsURL string) (bool, error) {
	stripe := isStripe(paymentsURL)
	if value == "" {
		return !stripe, nil
	}
	v, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("PAYMENTS_AUTHORITATIVE_LOOKUP must be true or false")
	}
	if v && stripe {
		return false, fmt.Errorf("PAYMENTS_AUTHORITATIVE_LOOKUP=true is wrong for Stripe (%s): its search lags writes", paymentsURL)
	}
	return v, nil
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
