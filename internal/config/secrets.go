package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// MinTokenLength is the shortest API token accepted when a process is
// reachable from other hosts: 32 characters of a random token are far
// beyond guessing at any rate the APIs answer.
const MinTokenLength = 32

// AllowDevSecretsVar names the variable that lets a reachable process
// start with development secrets anyway (a lab behind a firewall).
const AllowDevSecretsVar = "BOOKONCE_ALLOW_DEV_SECRETS"

// DevStripeWebhookSecret is the signing secret docker-compose.yml used to
// fall back on; it is published in this repository, so it is a dev secret.
const DevStripeWebhookSecret = "whsec_compose_local_only"

// devSecret is one secret that has a published development value.
type devSecret struct {
	name  string // the variable
	isDev bool   // its value is the published development one
	fix   string // what to do instead
}

// Exposed reports whether the configuration makes a process reachable from
// other hosts: a listen address or PUBLIC_BASE_URL that is not loopback.
// Only then do the development secrets matter.
func (c Config) Exposed() []string {
	var out []string
	for _, l := range []struct{ name, addr string }{
		{"GATEWAY_LISTEN", c.GatewayListen}, {"CALENDAR_LISTEN", c.CalendarListen},
		{"PAYMENTS_LISTEN", c.PaymentsListen}, {"WORKER_LISTEN", c.WorkerListen},
	} {
		host, _, err := net.SplitHostPort(l.addr)
		if err != nil || !loopbackHost(host) {
			out = append(out, l.name+"="+l.addr)
		}
	}
	if u, err := url.Parse(c.PublicBaseURL); err != nil || !loopbackHost(u.Hostname()) {
		out = append(out, "PUBLIC_BASE_URL="+c.PublicBaseURL)
	}
	return out
}

// loopbackHost reports whether host only ever means this machine; an
// empty host (":8080") listens on every interface.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSecrets refuses development secrets, and API tokens shorter than
// MinTokenLength, when the configuration is Exposed, unless allow says
// BOOKONCE_ALLOW_DEV_SECRETS=1; then DevSecretsAllowed names what was let
// through, for the process to warn about loudly.
func (c *Config) checkSecrets(allow string) []string {
	exposed := c.Exposed()
	if len(exposed) == 0 {
		return nil
	}
	var problems []string
	for _, s := range c.devSecrets() {
		if s.isDev {
			problems = append(problems, fmt.Sprintf("%s is a published development secret: %s", s.name, s.fix))
		}
	}
	if n := c.shortTokens(); n > 0 {
		problems = append(problems, fmt.Sprintf("BOOKONCE_API_TOKENS has %d token(s) shorter than %d characters: use long random tokens (openssl rand -hex 32)", n, MinTokenLength))
	}
	if len(problems) == 0 {
		return nil
	}
	if allow == "1" {
		c.DevSecretsAllowed = problems
		return nil
	}
	return []string{fmt.Sprintf("refusing to start with development secrets while reachable from other hosts (%s): %s; "+
		"to run a closed lab like this anyway set %s=1", strings.Join(exposed, ", "), strings.Join(problems, "; "), AllowDevSecretsVar)}
}

// devSecrets lists the secrets with a published development value. The
// ops page's session key is derived from TWILIO_AUTH_TOKEN, so it is
// covered by that one.
func (c Config) devSecrets() []devSecret {
	_, devToken := c.APITokens[DefaultAPIToken]
	return []devSecret{
		{"BOOKONCE_API_TOKENS", devToken, "replace " + DefaultAPIToken + " with a long random token (openssl rand -hex 32) and list its SHA-256 in the tenant's api_token_sha256"},
		{"TWILIO_AUTH_TOKEN", c.TwilioAuthToken == DevTwilioAuthToken, "set the auth token of your Twilio account"},
		{"STRIPE_WEBHOOK_SECRET", c.StripeWebhookSecret == DevStripeWebhookSecret, "set the whsec_ signing secret of your webhook endpoint, or a random one (whsec_ and openssl rand -hex 32)"},
	}
}

// shortTokens counts API tokens shorter than MinTokenLength.
func (c Config) shortTokens() int {
	n := 0
	for tok := range c.APITokens {
		if len(tok) < MinTokenLength && tok != DefaultAPIToken { // the dev token is reported as such
			n++
		}
	}
	return n
}

// DevSecretsWarning is the warning a process logs at start when
// BOOKONCE_ALLOW_DEV_SECRETS=1 let development secrets through; "" when
// none were.
func (c Config) DevSecretsWarning() string {
	if len(c.DevSecretsAllowed) == 0 {
		return ""
	}
	return "DEVELOPMENT SECRETS IN USE while reachable from other hosts, allowed by " + AllowDevSecretsVar + "=1: " + strings.Join(c.DevSecretsAllowed, "; ")
}
