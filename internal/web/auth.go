package web

import (
	"context"
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

// BearerAuth authenticates "Authorization: Bearer <token>" against tokens
// (token -> tenant). The tenant comes from the token, never from the body,
// so one tenant cannot act in another's key space.
func BearerAuth(tokens map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant, ok := lookupToken(tokens, bearer(r))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="bookonce"`)
			WriteProblem(w, NewProblem(http.StatusUnauthorized, "unauthenticated",
				"send Authorization: Bearer <token> with a token from BOOKONCE_API_TOKENS"))
			return
		}
		next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), tenant)))
	})
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(tok)
	}
	// Stripe clients send the secret key as the basic-auth user name.
	if user, _, ok := r.BasicAuth(); ok {
		return user
	}
	return ""
}

// lookupToken compares in constant time so response timing does not leak
// how much of a token was right.
func lookupToken(tokens map[string]string, got string) (string, bool) {
	if got == "" {
		return "", false
	}
	var tenant string
	found := 0
	for tok, t := range tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(got)) == 1 {
			tenant = t
			found = 1
		}
	}
	return tenant, found == 1
}
