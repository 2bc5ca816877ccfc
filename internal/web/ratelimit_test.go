package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/web"
)

const goodToken = "0123456789abcdef0123456789abcdef"

// serveLimited serves a bearer-protected handler on a real loopback
// listener with a failure budget of burst, refilled once a minute.
func serveLimited(t *testing.T, burst int) string {
	t.Helper()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant, _ := web.Tenant(r.Context())
		web.WriteJSON(w, http.StatusOK, map[string]string{"tenant": tenant})
	})
	h := web.BearerAuthLimited(web.StaticTokens(map[string]string{goodToken: "demo"}), web.NewAuthLimiter(1, burst), ok)
	l, err := web.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Service{Name: "limited", Handler: h}.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return "http://" + l.Addr().String()
}

func call(t *testing.T, c *http.Client, url, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v1/thing", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// TestAuthRateLimitPerClientIP: after burst wrong tokens from one address
// (each from a new connection and port), a wrong token from it gets 429
// with Retry-After as problem+json; the right token from the same
// address is still served (a client behind a guesser's address is never
// locked out), and so is another address.
func TestAuthRateLimitPerClientIP(t *testing.T) {
	const burst = 3
	url := serveLimited(t, burst)
	guesser, other := testsupport.ClientFrom(t, "127.0.0.1"), testsupport.ClientFrom(t, "127.0.0.2")

	require.Equal(t, http.StatusOK, call(t, guesser, url, goodToken).StatusCode, "a right token spends nothing")
	for i := range burst {
		require.Equal(t, http.StatusUnauthorized, call(t, guesser, url, "wrong-"+strconv.Itoa(i)).StatusCode, "failure %d", i+1)
	}
	res := call(t, guesser, url, "wrong-again")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
	secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After in seconds")
	require.True(t, secs >= 1 && secs <= 60, "Retry-After %d", secs)
	var p web.Problem
	require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
	require.Equal(t, "too_many_failed_authentications", p.Code)
	require.Equal(t, http.StatusOK, call(t, guesser, url, goodToken).StatusCode, "the right token from the same address")

	res = call(t, other, url, goodToken)
	require.Equal(t, http.StatusOK, res.StatusCode, "another address is not limited")
	var body map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Equal(t, "demo", body["tenant"])
}
