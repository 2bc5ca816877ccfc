package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/customerid"
)

// MinTokenLength is the shortest operator codec token accepted: 32
// characters of a random token are far beyond guessing at any rate the
// gateway answers. (A tenant's API token has a format of its own, with
// its entropy built in: package apitoken.)
const MinTokenLength = 32

// AllowDevSecretsVar names the variable that lets a reachable process
// start with development secrets anyway (a lab behind a firewall).
const AllowDevSecretsVar = "BOOKONCE_ALLOW_DEV_SECRETS"

// DevStripeWebhookSecret is the signing secret docker-compose.yml used to
// fall back on; it is published in this repository, so it is a dev secret.
const DevStripeWebhookSecret = "whsec_compose_local_only"

// Secret names a secret variable that has a published development value.
// A process checks the ones it uses (CheckSecrets): a calendar API, which
// never talks to Twilio, is not refused for lacking a Twilio token.
type Secret string

// The secrets with development values.
const (
	SecretAPITokens     Secret = "BOOKONCE_API_TOKENS"
	SecretTwilio        Secret = "TWILIO_AUTH_TOKEN"
	SecretStripeWebhook Secret = "STRIPE_WEBHOOK_SECRET"
	// SecretStripeWebhooks are the tenants' own webhook secrets; none may
	// be the published DevStripeWebhookSecret either.
	SecretStripeWebhooks Secret = "STRIPE_WEBHOOK_SECRETS"
	SecretCustomerID     Secret = customerid.Var
	SecretOpsSession     Secret = "OPS_SESSION_SECRET"
	SecretOperationID    Secret = "OPERATION_ID_SECRET"
)

// The published development values of the gateway's signing secrets.
const (
	DevOpsSessionSecret  = "bookonce-dev-ops-session-secret"
	DevOperationIDSecret = "bookonce-dev-operation-id-secret"
)

// minSigningSecret is the shortest signing secret accepted when exposed.
const minSigningSecret = 32

// The secrets each kind of process uses (stack.Command, stack.Begin): the
// worker mints its service tokens for the APIs with its key and calls
// Twilio with its token; the gateway verifies Twilio's and the payment
// provider's webhooks and signs the ops sessions and the agent's
// operation IDs; the payment API signs its webhooks; the calendar and
// payment APIs accept the worker's tokens by its public keys and the
// tenants' own by their digests; cmd/dev runs them all. The gateway also
// keys customers (BOOKONCE_CUSTOMER_ID_KEY) for the conversation IDs it
// starts and the agent's and ops page's look-ups.
var (
	WorkerSecrets   = []Secret{SecretServiceKey, SecretTwilio}
	GatewaySecrets  = []Secret{SecretTwilio, SecretStripeWebhook, SecretStripeWebhooks, SecretCustomerID, SecretOpsSession, SecretOperationID}
	PaymentsSecrets = []Secret{SecretStripeWebhook, SecretStripeWebhooks, SecretServicePublicKeys}
	CalendarSecrets = []Secret{SecretServicePublicKeys}
	AllSecrets      = []Secret{SecretAPITokens, SecretTwilio, SecretStripeWebhook, SecretStripeWebhooks, SecretCustomerID, SecretOpsSession, SecretOperationID, SecretServiceKey, SecretServicePublicKeys}
)

// Exposed lists the settings (NAME=value) that make a process reachable
// from other hosts: listen addresses and a PUBLIC_BASE_URL that are not
// loopback; none, only loopback, where the development secrets are fine.
func (c Config) Exposed() []string {
	var out []string
	for _, l := range []struct{ name, addr string }{
		{"GATEWAY_LISTEN", c.GatewayListen}, {"CALENDAR_LISTEN", c.CalendarListen},
		{"PAYMENTS_LISTEN", c.PaymentsListen}, {"WORKER_LISTEN", c.WorkerListen},
		{"AGENT_LISTEN", c.AgentListen}, {"ADMIN_LISTEN", c.AdminListen},
		{"PAYMENTS_ADMIN_LISTEN", c.PaymentsAdminListen}, {"CALENDAR_ADMIN_LISTEN", c.CalendarAdminListen},
	} {
		if l.addr == "" { // not served (a Config built in code)
			continue
		}
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

// CheckSecrets refuses the development values of the secrets a process
// uses when the configuration is Exposed. With BOOKONCE_ALLOW_DEV_SECRETS=1 it lets them through and
// records them in DevSecretsAllowed, for the process to warn about loudly.
func (c *Config) CheckSecrets(uses ...Secret) error {
	exposed := c.Exposed()
	if len(exposed) == 0 {
		return nil
	}
	var problems []string
	for _, s := range uses {
		if p := c.devProblem(s); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if c.allowDevSecrets {
		c.DevSecretsAllowed = problems
		return nil
	}
	return fmt.Errorf("refusing to start with development secrets while reachable from other hosts (%s): %s; "+
		"to run a closed lab like this anyway set %s=1", strings.Join(exposed, ", "), strings.Join(problems, "; "), AllowDevSecretsVar)
}

// devProblem says what is wrong with secret s and what to do; "" if
// nothing is.
func (c Config) devProblem(s Secret) string {
	switch s {
	case SecretAPITokens:
		if _, dev := c.APITokens[DefaultAPIToken]; dev {
			return fmt.Sprintf("%s contains the development token %q: mint one with `starter tenants token` and list its SHA-256 in the tenant's api_token_sha256", s, DefaultAPIToken)
		}
	case SecretTwilio:
		if c.TwilioAuthToken == DevTwilioAuthToken {
			return fmt.Sprintf("%s is the development token: set the auth token of your Twilio account", s)
		}
	case SecretStripeWebhook:
		if c.StripeWebhookSecret == DevStripeWebhookSecret {
			return fmt.Sprintf("%s is the published %s: set your endpoint's signing secret, or whsec_ and a random one (openssl rand -hex 32)", s, DevStripeWebhookSecret)
		}
	case SecretStripeWebhooks:
		for _, tenant := range slices.Sorted(maps.Keys(c.StripeWebhookSecrets)) {
			if c.StripeWebhookSecrets[tenant] == DevStripeWebhookSecret {
				return fmt.Sprintf("%s gives tenant %q the published %s: set the signing secret of its own endpoint", s, tenant, DevStripeWebhookSecret)
			}
		}
	case SecretOpsSession:
		return signingProblem(s, c.OpsSessionSecret, DevOpsSessionSecret, "anybody could sign an ops session")
	case SecretOperationID:
		return signingProblem(s, c.OperationIDSecret, DevOperationIDSecret, "anybody could sign an operation ID")
	case SecretServiceKey, SecretServicePublicKeys:
		return c.serviceProblem(s)
	case SecretCustomerID:
		if c.CustomerIDKey == customerid.DevSecret {
			return fmt.Sprintf("%s is the published development secret, with which anybody can test a guessed phone number against a workflow ID: set a random one (openssl rand -hex 32) in every gateway and CLI", s)
		}
	}
	return ""
}

// CheckTenantDigests refuses, like CheckSecrets, a tenants registry that
// accepts the development token (the demo tenant's api_token_sha256 lists
// its digest) when the configuration is Exposed; accepts says whether a
// tenant lists a hex SHA-256 digest. With BOOKONCE_ALLOW_DEV_SECRETS=1 it
// returns the warning to log instead.
func (c *Config) CheckTenantDigests(accepts func(digest string) bool) (warning string, err error) {
	if len(c.Exposed()) == 0 || !accepts(apitoken.Digest(DefaultAPIToken)) {
		return "", nil
	}
	problem := fmt.Sprintf("a tenant's api_token_sha256 lists the digest of the development token %q (deploy/tenants.demo.yaml): "+
		"replace it with your own token's digest and apply the file (starter tenants apply)", DefaultAPIToken)
	if c.allowDevSecrets {
		c.DevSecretsAllowed = append(c.DevSecretsAllowed, problem)
		return c.DevSecretsWarning(), nil
	}
	return "", fmt.Errorf("refusing to serve while reachable from other hosts (%s): %s; to run a closed lab like this anyway set %s=1",
		strings.Join(c.Exposed(), ", "), problem, AllowDevSecretsVar)
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

// signingProblem says what is wrong with a signing secret: its published
// development value, or fewer than minSigningSecret characters.
func signingProblem(s Secret, v, dev, risk string) string {
	switch {
	case v == dev:
		return fmt.Sprintf("%s is the published development secret, with which %s: set a random one (openssl rand -hex 32), the same in every gateway", s, risk)
	case len(v) < minSigningSecret:
		return fmt.Sprintf("%s has fewer than %d characters: set a random one (openssl rand -hex 32)", s, minSigningSecret)
	}
	return ""
}
