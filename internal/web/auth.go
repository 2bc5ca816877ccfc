package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

type tenantKey struct{}

// WithTenant returns ctx carrying the authenticated tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// Tenant returns the authenticated tenant of a request context.
func Tenant(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok && t != ""
}

// TokenLookup returns the tenant of an API bearer token. Implementations
// compare in constant time, so response timing does not leak how much of
// a token was right (tenants.Registry.Authenticate, StaticTokens).
type TokenLookup func(token string) (tenant string, ok bool)

// AnyOf is a TokenLookup that asks each of lookups in turn and answers
// with the first that knows the token: an API that takes both a tenant's
// own token and the worker's service token.
func AnyOf(lookups ...TokenLookup) TokenLookup {
	return func(token string) (string, bool) {
		for _, l := range lookups {
			if tenant, ok := l(token); ok {
				return tenant, true
			}
		}
		return "", false
	}
}

// BearerAuth authenticates "Authorization: Bearer <token>" with lookup.
// The tenant comes from the token, never from the body, so one tenant
// cannot act in another's key space. Failed attempts are limited per
// client address with the default budget (BearerAuthLimited).
func BearerAuth(lookup TokenLookup, next http.Handler) http.Handler {
	return BearerAuthLimited(lookup, nil, next)
}

// BearerAuthLimited is BearerAuth with the failure budget of limiter: a
// wrong token from an address that has spent it is answered 429 with
// Retry-After. A valid token is always served: a client behind the same
// address as a guesser is never locked out. The budget only stops noise:
// what makes guessing hopeless is the token (a tenant's carries 130
// random bits and a checksum, and a malformed one is refused before any
// lookup, package apitoken; the lookup is constant time).
func BearerAuthLimited(lookup TokenLookup, limiter *AuthLimiter, next http.Handler) http.Handler {
	return authenticate(lookup, limiter, false, next)
}

// StripeKeyAuth is BearerAuthLimited that also takes the key as a Basic
// auth user name, as Stripe's API does (stripe-go sends a bearer header;
// curl -u sk_…: does not). Only the Stripe-compatible payment API needs
// it; every other API takes a bearer token alone.
func StripeKeyAuth(lookup TokenLookup, limiter *AuthLimiter, next http.Handler) http.Handler {
	return authenticate(lookup, limiter, true, next)
}

func authenticate(lookup TokenLookup, limiter *AuthLimiter, basic bool, next http.Handler) http.Handler {
	if limiter == nil {
		limiter = NewAuthLimiter(AuthFailuresPerMinute, AuthFailureBurst)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant, ok := "", false
		if tok := bearer(r, basic); tok != "" && lookup != nil {
			tenant, ok = lookup(tok)
		}
		if !ok || tenant == "" {
			if wait, blocked := limiter.Blocked(r); blocked {
				TooManyFailures(w, wait)
				return
			}
			limiter.Failed(r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="bookonce"`)
			WriteProblem(w, NewProblem(http.StatusUnauthorized, "unauthenticated",
				"send Authorization: Bearer <token> with a token minted by `starter tenants token` (bkapi_…) whose SHA-256 is in the tenant's api_token_sha256"))
			return
		}
		next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), tenant)))
	})
}

// BearerToken is the token of an "Authorization: Bearer <token>" header,
// "" for none or another scheme.
func BearerToken(h http.Header) string {
	if scheme, tok, ok := strings.Cut(h.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	return ""
}

func bearer(r *http.Request, basic bool) string {
	if tok := BearerToken(r.Header); tok != "" {
		return tok
	}
	// Stripe clients may send the secret key as the basic-auth user name.
	if user, _, ok := r.BasicAuth(); ok && basic {
		return user
	}
	return ""
}

// StaticTokens is a TokenLookup over a fixed map (token -> tenant), for
// tests and tools that serve the APIs without a tenants registry. Tokens
// are compared as SHA-256 digests in constant time, as the registry does:
// equal lengths, so not even a token's length leaks.
func StaticTokens(tokens map[string]string) TokenLookup {
	digests := make(map[[sha256.Size]byte]string, len(tokens))
	for tok, tenant := range tokens {
		digests[sha256.Sum256([]byte(tok))] = tenant
	}
	return func(got string) (string, bool) {
		if got == "" {
			return "", false
		}
		sum := sha256.Sum256([]byte(got))
		var tenant string
		found := 0
		for d, t := range digests {
			if subtle.ConstantTimeCompare(d[:], sum[:]) == 1 {
				tenant = t
				found = 1
			}
		}
		return tenant, found == 1
	}
}
