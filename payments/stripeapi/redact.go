package stripeapi

import (
	"errors"
	"net/url"
)

// RedactedURL is raw without what may be a secret: the user info, the
// query and the fragment. Shops put tokens there (…/hook?token=…), and Go's
// *url.Error prints the whole URL into every log line and every stored
// last_error that carries it.
func RedactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparseable URL)"
	}
	u.User = nil
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "REDACTED", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// redactURLError is err with the URL of a *url.Error it carries redacted.
func redactURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	c := *ue
	c.URL = RedactedURL(ue.URL)
	return &c
}
