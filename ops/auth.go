package ops

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type auth struct {
	tenant string
	token  string
	cookie string // the session cookie value; "" for bearer requests
}

func (a auth) csrf() string {
	if a.cookie == "" {
		return ""
	}
	return mac(a.token, "csrf|"+a.cookie)
}

func mac(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func (p *Page) lookup(got string) (string, string, bool) {
	if got == "" {
		return "", "", false
	}
	var tenant, token string
	found := 0
	for tok, t := range p.Tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(got)) == 1 {
			tenant, token, found = t, tok, 1
		}
	}
	return tenant, token, found == 1 && tenant != ""
}

func (p *Page) newSession(token string) string {
	exp := strconv.FormatInt(p.now().Add(SessionTTL).Unix(), 10)
	return exp + "." + mac(token, "session|"+exp)
}

func (p *Page) authenticate(r *http.Request) (auth, bool) {
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		tenant, token, ok := p.lookup(strings.TrimSpace(tok))
		return auth{tenant: tenant, token: token}, ok
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return auth{}, false
	}
	expS, sig, ok := strings.Cut(c.Value, ".")
	exp, err := strconv.ParseInt(expS, 10, 64)
	if !ok || err != nil || p.now().Unix() >= exp {
		return auth{}, false
	}
	var a auth
	found := 0
	for tok, tenant := range p.Tokens {
		if hmac.Equal([]byte(mac(tok, "session|"+expS)), []byte(sig)) && tenant != "" {
			a, found = auth{tenant: tenant, token: tok, cookie: c.Value}, 1
		}
	}
	return a, found == 1
}

func (p *Page) setSession(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: p.newSession(token), Path: RoutePage,
		MaxAge: int(SessionTTL / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	})
}

func (p *Page) unauthenticated(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="bookonce ops"`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	if err := templates.ExecuteTemplate(w, "login.html", map[string]any{"Message": msg, "Login": RouteLogin}); err != nil {
		p.log().Error("render ops login", "err", err)
	}
}

// login takes the token from the prompt's form body (not the URL, so it
// stays out of history and access logs).
func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	_, token, ok := p.lookup(r.PostForm.Get("token"))
	if !ok {
		p.unauthenticated(w, "That token is not valid.")
		return
	}
	p.setSession(w, r, token)
	http.Redirect(w, r, RoutePage, http.StatusSeeOther)
}

func (p *Page) logout(w http.ResponseWriter, r *http.Request) {
	a, ok := p.authenticate(r)
	if ok && a.cookie != "" {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if r.ParseForm() != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(a.csrf())) {
			p.errorPage(w, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong. Reload the page and try again.")
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: RoutePage, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, RoutePage, http.StatusSeeOther)
}
