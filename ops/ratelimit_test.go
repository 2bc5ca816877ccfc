package ops_test

import (
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/ops"
)

// TestSignInRateLimitPerClientIP: wrong tokens spend the address's
// budget; then a wrong token, however presented (sign-in form, bearer),
// is answered 429 with Retry-After, while the right token from the same
// address still signs in (staff behind a guesser's address are never
// locked out), a session signed in before keeps working and another
// address signs in.
func TestSignInRateLimitPerClientIP(t *testing.T) {
	const burst = 3
	f := newFixture(t)
	f.page.Limiter = web.NewAuthLimiter(1, burst)
	guesser, other := testsupport.ClientFrom(t, "127.0.0.1"), testsupport.ClientFrom(t, "127.0.0.2")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	guesser.Jar = jar

	res := testsupport.OpsSignIn(t, guesser, f.srv.URL, token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "signed in before the guessing")
	anon := testsupport.ClientFrom(t, "127.0.0.1")
	anon.Jar = newJar(t)
	for i := range burst {
		res := testsupport.OpsSignIn(t, anon, f.srv.URL, "wrong-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "failure %d", i+1)
	}

	attempts := map[string]func(tok string) *http.Response{
		"form":   func(tok string) *http.Response { return testsupport.OpsSignIn(t, anon, f.srv.URL, tok) },
		"bearer": func(tok string) *http.Response { res, _ := get(t, anon, f.srv.URL+ops.RoutePage, tok); return res },
	}
	for name, try := range attempts {
		res := try("wrong-again")
		require.Equal(t, http.StatusTooManyRequests, res.StatusCode, name)
		require.NotEmpty(t, res.Header.Get("Retry-After"), name)
		require.Empty(t, res.Header.Get("Set-Cookie"), name)
	}
	res = attempts["form"](token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the right token signs in from the guesser's address")
	res = attempts["bearer"](token)
	require.Equal(t, http.StatusOK, res.StatusCode, "the right bearer token from the guesser's address")

	res, _ = get(t, guesser, f.srv.URL+ops.RoutePage, "")
	require.Equal(t, http.StatusOK, res.StatusCode, "a session is not a sign-in")
	other.Jar = newJar(t)
	res = testsupport.OpsSignIn(t, other, f.srv.URL, token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "another address signs in")
	require.Contains(t, res.Header.Get("Set-Cookie"), ops.CookieName+"=")
}

func newJar(t *testing.T) *cookiejar.Jar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return jar
}
