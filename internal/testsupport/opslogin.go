package testsupport

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// loginCSRF finds the sign-in form's CSRF token in the ops page's 401.
var loginCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

// OpsSignIn signs c (a client with a cookie jar) in to the ops page at
// base as a browser does: it opens the page, takes the sign-in form's
// CSRF token (bound to the pre-session cookie the page set), and POSTs
// the token with it. It returns the answer to the POST (303 and a session
// cookie when the token is good); its body is closed.
func OpsSignIn(t testing.TB, c *http.Client, base, token string) *http.Response {
	t.Helper()
	res, err := c.Get(base + "/ops")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "the page asks to sign in: %s", body)
	m := loginCSRF.FindSubmatch(body)
	require.NotNil(t, m, "the sign-in form carries a CSRF token")
	form := url.Values{"token": {token}, "csrf": {string(m[1])}}
	req, err := http.NewRequest(http.MethodPost, base+"/ops/login", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = c.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res
}
