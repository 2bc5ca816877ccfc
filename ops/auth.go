package ops

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bookonce/bookonce/internal/apitoken"
	"github.com/bookonce/bookonce/internal/web"
)

type auth struct {
	tenant string
	digest string // SHA-256 (hex) of the token that authenticated
	cookie string // the session cookie value; "" for bearer requests
}

func (a auth) csrf(key string) string {
	if a.cookie == "" {
		return ""
	}
	return mac(key, "csrf|"+a.cookie)
}

func mac(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// Tokens says who may use the page: the tenant of a bearer token, and of
// a token's SHA-256 digest (which a session names). tenants.Registry is
// one; StaticTokens another.
type Tokens interface {
	Authenticate(token string) (tenant string, ok bool)
	TenantOfDigest(digest string) (tenant string, ok bool)
}

// StaticTokens is Tokens over a fixed map (token -> tenant), for tests
// and tools without a tenants registry.
type StaticTokens map[string]string

// Authenticate compares got with every token in constant time.
func (s StaticTokens) Authenticate(got string) (string, bool) {
	return web.StaticTokens(s)(got)
}

// TenantOfDigest returns the tenant of the token with that digest.
func (s StaticTokens) TenantOfDigest(digest string) (string, bool) {
	for tok, tenant := range s {
		if hmac.Equal([]byte(apitoken.Digest(tok)), []byte(digest)) {
			return tenant, tenant != ""
		}
	}
	return "", false
}

// lookup authenticates a token r presented; a wrong one spends r's
// address's failure budget (throttle).
func (p *Page) lookup(r *http.Request, got string) (tenant, digest string, ok bool) {
	if got == "" || p.Tokens == nil {
		return "", "", false
	}
	tenant, ok = p.Tokens.Authenticate(got)
	if !ok || tenant == "" {
		p.limiter().Failed(r)
		return "", "", false
	}
	return tenant, apitoken.Digest(got), true
}

// limiter is the page's failure budget per client address: Limiter, else
// the default one.
func (p *Page) limiter() *web.AuthLimiter {
	p.limiterOnce.Do(func() {
		if p.Limiter == nil {
			p.Limiter = web.NewAuthLimiter(web.AuthFailuresPerMinute, web.AuthFailureBurst)
		}
	})
	return p.Limiter
}

// throttle answers 429 with Retry-After to a request that presents a
// wrong token (sign-in form, bearer header) from an address that has
// spent its failure budget. A valid token and a session are never
// throttled: staff behind the same proxy as a guesser keep working.
func (p *Page) throttle(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented, presents := p.presented(w, r)
		if presents {
			if wait, blocked := p.limiter().Blocked(r); blocked && !p.valid(presented) {
				web.RetryAfter(w, wait)
				p.errorPage(w, http.StatusTooManyRequests, "Too many failed sign-ins",
					"Too many wrong tokens came from your address. Wait a minute, then try again.")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// presented is the token r presents: its bearer header, or the sign-in
// form's token field (the form read here, size-limited, as the sign-in
// handler reads it).
func (p *Page) presented(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.Header.Get("Authorization") != "" {
		return web.BearerToken(r.Header), true
	}
	if r.Method != http.MethodPost || r.URL.Path != RouteLogin {
		return "", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if r.ParseForm() != nil {
		return "", true
	}
	return r.PostForm.Get("token"), true
}

// valid reports whether token authenticates a tenant (nothing spent).
func (p *Page) valid(token string) bool {
	if token == "" || p.Tokens == nil {
		return false
	}
	tenant, ok := p.Tokens.Authenticate(token)
	return ok && tenant != ""
}

// sessionKey keys the session and CSRF MACs: the configured SessionKey,
// else one random key for the life of the page.
func (p *Page) sessionKey() string {
	p.keyOnce.Do(func() {
		if len(p.SessionKey) > 0 {
			p.key = string(p.SessionKey)
			return
		}
		b := make([]byte, 32)
		_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
		p.key = string(b)
	})
	return p.key
}

func (p *Page) newSession(digest string) string {
	exp := strconv.FormatInt(p.now().Add(SessionTTL).Unix(), 10)
	return exp + "." + digest + "." + mac(p.sessionKey(), "session|"+digest+"|"+exp)
}

func (p *Page) authenticate(r *http.Request) (auth, bool) {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		tenant, digest, ok := p.lookup(r, strings.TrimSpace(tok))
		return auth{tenant: tenant, digest: digest}, ok
	}
	c, err := r.Cookie(CookieName)
	if err != nil || p.Tokens == nil {
		return auth{}, false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 {
		return auth{}, false
	}
	expS, digest, sig := parts[0], parts[1], parts[2]
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil || p.now().Unix() >= exp || !hmac.Equal([]byte(mac(p.sessionKey(), "session|"+digest+"|"+expS)), []byte(sig)) {
		return auth{}, false
	}
	// The token must still be configured: removing it ends its sessions.
	tenant, ok := p.Tokens.TenantOfDigest(digest)
	if !ok || tenant == "" {
		return auth{}, false
	}
	return auth{tenant: tenant, digest: digest, cookie: c.Value}, true
}

func (p *Page) setSession(w http.ResponseWriter, r *http.Request, digest string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: p.newSession(digest), Path: RoutePage,
		MaxAge: int(SessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	})
}

// unauthenticated answers 401 with the sign-in form. The form carries a
// login CSRF token bound to a fresh pre-session cookie (LoginCookieName),
// so another site cannot sign a browser in under the attacker's token.
func (p *Page) unauthenticated(w http.ResponseWriter, msg string) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	pre := hex.EncodeToString(nonce)
	http.SetCookie(w, &http.Cookie{Name: LoginCookieName, Value: pre, Path: RoutePage, MaxAge: int(LoginTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("WWW-Authenticate", `Bearer realm="bookonce ops"`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	data := map[string]any{"Message": msg, "Login": RouteLogin, "CSRF": mac(p.sessionKey(), "login|"+pre)}
	if err := templates.ExecuteTemplate(w, "login.html", data); err != nil {
		p.log().Error("render ops login", "err", err)
	}
}

// login takes the token from the sign-in form's body (never the URL, so
// it stays out of history and access logs), after checking the form's
// login CSRF token against the pre-session cookie the form came with.
func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	pre, err := r.Cookie(LoginCookieName)
	if err != nil || pre.Value == "" || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(mac(p.sessionKey(), "login|"+pre.Value))) {
		p.unauthenticated(w, "The sign-in form expired or came from elsewhere. Enter the token again.")
		return
	}
	_, digest, ok := p.lookup(r, r.PostForm.Get("token"))
	if !ok {
		p.unauthenticated(w, "That token is not valid.")
		return
	}
	p.setSession(w, r, digest)
	http.SetCookie(w, &http.Cookie{Name: LoginCookieName, Value: "", Path: RoutePage, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, RoutePage, http.StatusSeeOther)
}

func (p *Page) logout(w http.ResponseWriter, r *http.Request) {
	a, ok := p.authenticate(r)
	if ok && a.cookie != "" {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if r.ParseForm() != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(a.csrf(p.sessionKey()))) {
			p.errorPage(w, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong. Reload the page and try again.")
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: RoutePage, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, RoutePage, http.StatusSeeOther)
}

// Authorized is the tenant of r's valid bearer token or ops session, and
// whether it has one, for routes served next to the page with its
// sign-in (the codec server, which decodes only that tenant's payloads).
// Wrong bearer tokens spend the address's failure budget.
func (p *Page) Authorized(r *http.Request) (tenant string, ok bool) {
	a, ok := p.authenticate(r)
	return a.tenant, ok && a.tenant != ""
}
