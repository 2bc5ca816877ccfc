package web_test

// Attacks on the failed-authentication limiter (docs/security.md).

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/web"
)

// TestOneGuesserBehindTheIngressLocksNobodyOut: every client arrives from
// the ingress's address. Behind a trusted proxy the budget is the
// client's from X-Forwarded-For: a guesser who spent his does not lock
// out another client, and a valid token is served even to the guesser's
// own address. From an untrusted peer the header is ignored, so a
// guesser cannot mint fresh budgets by writing it. Before, one wrong
// token every 6 s from anywhere kept every tenant's agent tools at 429.
func TestOneGuesserBehindTheIngressLocksNobodyOut(t *testing.T) {
	const ingress = "10.0.0.5"
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}
	for _, c := range []struct {
		name     string
		trust    []netip.Prefix
		otherGot int // another client's wrong token, once the guesser spent his budget
	}{
		{"behind a trusted ingress", trusted, http.StatusUnauthorized},
		{"header from an untrusted peer is ignored", nil, http.StatusTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			limiter := web.NewAuthLimiter(1, 3).Trust(c.trust)
			h := web.BearerAuthLimited(web.StaticTokens(map[string]string{goodToken: "demo"}), limiter,
				http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
			send := func(client, token string) int {
				r := httptest.NewRequest(http.MethodGet, "/v1/thing", nil)
				r.RemoteAddr = ingress + ":40000"
				r.Header.Set("X-Forwarded-For", client+", "+ingress)
				r.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code
			}
			for i := range 5 {
				send("203.0.113.9", "wrong-"+strconv.Itoa(i))
			}
			require.Equal(t, http.StatusTooManyRequests, send("203.0.113.9", "wrong-again"), "the guesser is limited")
			require.Equal(t, c.otherGot, send("198.51.100.7", "wrong-once"))
			require.Equal(t, http.StatusOK, send("198.51.100.7", goodToken), "a valid token is always served")
			require.Equal(t, http.StatusOK, send("203.0.113.9", goodToken), "even from the guesser's address")
		})
	}
}

func TestClientBehindProxies(t *testing.T) {
	limiter := web.NewAuthLimiter(1, 1).Trust([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")})
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.1:1", "198.51.100.7", "203.0.113.1"},
		{"10.0.0.5:1", "198.51.100.7", "198.51.100.7"},
		{"10.0.0.5:1", "6.6.6.6, 198.51.100.7, 10.1.1.1", "198.51.100.7"},
		{"10.0.0.5:1", "", "10.0.0.5"},
		{"10.0.0.5:1", "not-an-ip, 198.51.100.7", "198.51.100.7"},
		{"10.0.0.5:1", "198.51.100.7, garbage", "10.0.0.5"},
		{"[::1]:1", "2001:db8::1", "2001:db8::1"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		require.Equal(t, c.want, limiter.Client(r), "%s via %s", c.xff, c.peer)
	}
}

// TestBasicAuthOnlyWhereStripeClientsNeedIt: a token sent as a Basic
// auth user name (curl -u, Stripe's own convention) is accepted by the
// Stripe-compatible payment API alone; the other APIs take a bearer
// token only, so a credential in a URL's userinfo or a browser's saved
// Basic login never authenticates there.
func TestBasicAuthOnlyWhereStripeClientsNeedIt(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	tokens := web.StaticTokens(map[string]string{goodToken: "demo"})
	for _, c := range []struct {
		name string
		h    http.Handler
		want int
	}{
		{"bearer-only API", web.BearerAuthLimited(tokens, nil, ok), http.StatusUnauthorized},
		{"Stripe-compatible API", web.StripeKeyAuth(tokens, nil, ok), http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/thing", nil)
		r.SetBasicAuth(goodToken, "")
		w := httptest.NewRecorder()
		c.h.ServeHTTP(w, r)
		require.Equal(t, c.want, w.Code, c.name)
	}
}
