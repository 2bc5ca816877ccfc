// Package ops is the operator's page of the gateway: the tenant's review
// queue with resolve buttons, its running bookings with Cancel and
// No-show buttons, the duplicate counters per layer (rule 12)
// with a short in-memory history, the unknown outcomes (open
// unknown_outcome cases, outbox rows in review or pending too long, inbox
// events not yet handed to their workflow), the payment webhooks that
// matched no payment workflow, the shop's webhook endpoints that the
// payment API disabled (or the shop did), and links to every workflow in
// the Temporal Web UI. It is server-rendered HTML without JavaScript.
//
// Authentication: "Authorization: Bearer <token>" (scripts, curl) or, for
// browsers, a session cookie obtained with the sign-in form, which POSTs
// the token to /ops/login (never in a URL, where history and access logs
// keep it). The form carries a login CSRF token bound to a pre-session
// cookie, so no other site can sign a browser in under its own token.
// Tokens are those of the tenants registry (api_token_sha256); the tenant
// always comes from the token.
//
// Sessions are stateless, so they survive restarts and work behind several
// gateway replicas sharing SessionKey: the cookie is "<expiry>.<digest>.
// <HMAC-SHA256(SessionKey, digest, expiry)>" with the token's SHA-256
// digest, never the token itself, and it is HttpOnly, SameSite=Strict, Path=/ops
// (Secure when the request came over TLS). Removing a token from the
// configuration ends its sessions.
//
// CSRF: a cookie-authenticated POST must carry the synchronizer token of
// its session in the hidden form field "csrf" (HMAC-SHA256(SessionKey,
// "csrf" + cookie)), compared in constant time. SameSite=Strict already keeps the
// cookie off cross-site requests in current browsers; the token also
// covers browsers without SameSite, same-site (sibling subdomain) attackers
// and clickjacking is refused by frame-ancestors 'none'. A bearer-
// authenticated POST needs no CSRF token: browsers never attach a bearer
// header on their own (basic auth is deliberately not accepted here).
package ops

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/review"
)

// Routes of the page. The handler serves these absolute paths; mount it
// for both "/ops" and "/ops/".
const (
	RoutePage    = "/ops"
	RouteLogin   = "/ops/login"
	RouteLogout  = "/ops/logout"
	RouteResolve = "/ops/review-cases/{id}/resolve"
	// RouteCaseWorkflow redirects to the Web UI page of a case's workflow,
	// for workflow IDs that contain a phone number (which the page never
	// puts into its HTML, not even into a link).
	RouteCaseWorkflow = "/ops/review-cases/{id}/workflow"
)

// CookieName is the session cookie.
const CookieName = "bookonce_ops"

// LoginCookieName is the pre-session cookie the sign-in form's CSRF token
// is bound to; LoginTTL is how long a shown form can be submitted.
const (
	LoginCookieName = "bookonce_ops_login"
	LoginTTL        = time.Hour
)

// SessionTTL is how long a browser session lasts.
const SessionTTL = 12 * time.Hour

// StaleAfter is when a pending outbox row or inbox event counts as stuck.
const StaleAfter = 2 * time.Minute

// Page is the ops page.
type Page struct {
	Pool *pgxpool.Pool
	// Reviews lists the tenant's review cases and resolves them, as the
	// review API does.
	Reviews *review.Resolver
	// Gatherers are the registries read for the duplicate counters.
	Gatherers []prometheus.Gatherer
	// UIBaseURL is the Temporal Web UI (e.g. http://127.0.0.1:8233); empty:
	// no links.
	UIBaseURL string
	Namespace string
	// Tokens authenticate: the tenants registry (api_token_sha256).
	Tokens Tokens
	// Temporal lists the tenant's bookings and sends their cancel and
	// no_show Updates; nil: no bookings section.
	Temporal client.Client
	// SessionKey keys the session cookies' MACs; every gateway replica
	// needs the same key for a session to work on all of them. Empty: a
	// random key per process (sessions end with a restart).
	SessionKey []byte
	// Limiter limits wrong tokens per client address; nil: the default
	// budget (web.AuthFailuresPerMinute).
	Limiter *web.AuthLimiter
	Now     func() time.Time
	Logger  *slog.Logger

	once    sync.Once
	history *history
	keyOnce sync.Once
	key     string

	limiterOnce sync.Once
}

func (p *Page) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Page) log() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

func (p *Page) init() {
	p.once.Do(func() { p.history = newHistory(HistoryMinutes) })
}

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"mask": mask.Phones,
}).ParseFS(templateFS, "templates/*.html"))

// Handler serves GET /ops, POST /ops/login, POST /ops/logout,
// POST /ops/review-cases/{id}/resolve and the booking buttons.
func (p *Page) Handler() http.Handler {
	p.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+RoutePage, p.page)
	mux.HandleFunc("POST "+RouteLogin, p.login)
	mux.HandleFunc("POST "+RouteLogout, p.logout)
	mux.HandleFunc("POST "+RouteResolve, p.resolve)
	mux.HandleFunc("GET "+RouteCaseWorkflow, p.caseWorkflow)
	mux.HandleFunc("POST "+RouteBookingCancel, p.cancelBooking)
	mux.HandleFunc("POST "+RouteBookingNoShow, p.noShowBooking)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.errorPage(w, http.StatusNotFound, "Not found", "There is no page "+r.Method+" "+r.URL.Path+".")
	})
	return securityHeaders(p.throttle(mux))
}

// Run samples the counters every minute until ctx ends, so the history
// also fills while nobody looks at the page (optional; page loads sample
// too).
func (p *Page) Run(ctx context.Context) {
	p.init()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		p.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func (p *Page) errorPage(w http.ResponseWriter, status int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	err := templates.ExecuteTemplate(w, "error.html", map[string]any{
		"Status": status, "StatusText": http.StatusText(status), "Title": title, "Message": msg, "Back": RoutePage,
	})
	if err != nil {
		p.log().Error("render ops error page", "err", err)
	}
}
