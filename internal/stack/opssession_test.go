package stack_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/ops"
)

// TestOpsSessionCannotBeForgedFromTheTwilioToken: whoever holds the
// Twilio auth token (the Twilio account's staff, a log of the worker's
// environment) and a tenants file (which lists token digests, the very
// value a session names) could sign an ops session for any tenant while
// the session key was derived from that token. The key is now
// OPS_SESSION_SECRET's: the forged cookie is refused, one signed with
// the secret's key is served.
func TestOpsSessionCannotBeForgedFromTheTwilioToken(t *testing.T) {
	const twilioToken, sessionSecret = "the-shops-twilio-auth-token", "0123456789abcdef0123456789abcdef-ops"
	srv := opsCodecServer(t, load(t, map[string]string{"TWILIO_AUTH_TOKEN": twilioToken, "OPS_SESSION_SECRET": sessionSecret}))
	digest := sha256.Sum256([]byte(config.DefaultAPIToken)) // the demo tenant's api_token_sha256
	cases := []struct {
		name   string
		secret string
		label  string
		served bool
	}{
		{"signed with a key from the Twilio token", twilioToken, "bookonce ops sessions", false},
		{"signed with the session secret's key", sessionSecret, "bookonce ops sessions", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+ops.RoutePage, nil)
			require.NoError(t, err)
			req.AddCookie(&http.Cookie{Name: ops.CookieName, Value: forgeSession(c.secret, c.label, hex.EncodeToString(digest[:]))})
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noRedirect.Do(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, c.served, resp.StatusCode == http.StatusOK, "status %d", resp.StatusCode)
		})
	}
}

// forgeSession signs an ops session cookie for digest as the ops page
// does (ops/auth.go), with the key HMAC-SHA256(secret, label).
func forgeSession(secret, label, digest string) string {
	k := hmac.New(sha256.New, []byte(secret))
	k.Write([]byte(label))
	exp := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte("session|" + digest + "|" + exp))
	return exp + "." + digest + "." + hex.EncodeToString(m.Sum(nil))
}
