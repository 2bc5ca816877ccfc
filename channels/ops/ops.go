// Package ops is the operator's page of the gateway: the tenant's review
// queue with resolve buttons, the duplicate counters per layer (rule 12)
// with a short in-memory history, the unknown outcomes (open
// unknown_outcome cases, outbox rows in review or pending too long, inbox
// events not yet handed to their workflow) and links to every workflow in
// the Temporal Web UI. It is server-rendered HTML without JavaScript.
//
// Authentication: "Authorization: Bearer <token>" (scripts, curl) or, for
// browsers, a session cookie obtained with /ops?token=<token> (or the token
// prompt, which POSTs the token to /ops/login). Tokens are the gateway's
// token -> tenant map (BOOKONCE_API_TOKENS); the tenant always comes from
// the token.
//
// Sessions are stateless, so they survive restarts and work behind several
// gateway replicas sharing SessionKey: the cookie is
// "<expiry>.<SHA-256(token)>.<HMAC-SHA256(SessionKey, digest, expiry)>",
// never the token itself, and it is HttpOnly, SameSite=Strict, Path=/ops
// (Secure when the request came over TLS). Removing a token from the
// configuration ends its sessions.
//
// CSRF: a cookie-authenticated POST must carry the synchronizer token of
// its session in the hidden form field "csrf" (HMAC-SHA256(token, "csrf" +
// cookie)), compared in constant time. SameSite=Strict already keeps the
// cookie off cross-site requests in current browsers; the token also
// covers browsers without SameSite, same-site (sibling subdomain) attackers
// and clickjacking is refused by frame-ancestors 'none'. A bearer-
// authenticated POST needs no CSRF token: browsers never attach a bearer
// header on their own (basic auth is deliberately not accepted here).
package ops

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

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

// SessionTTL is how long a browser session lasts.
const SessionTTL = 12 * time.Hour

// StaleAfter is when a pending outbox row or inbox event counts as stuck.
const StaleAfter = 2 * time.Minute

// Page is the ops page.
type Page struct {
	Pool    *pgxpool.Pool
	Reviews *review.Store
	// Resolve records the decision and signals the waiting workflow (the
	// gateway's resolve logic). The page has already checked that the case
	// exists, belongs to tenant and that action fits its reason.
	Resolve func(ctx context.Context, tenant, caseID string, action review.Action) error
	// Gatherers are the registries read for the duplicate counters.
	Gatherers []prometheus.Gatherer
	// UIBaseURL is the Temporal Web UI (e.g. http://127.0.0.1:8233); empty:
	// no links.
	UIBaseURL string
	Namespace string
	// Tokens authenticate: the tenants registry (api_token_sha256).
	Tokens Tokens
	// SessionKey keys the session cookies' MACs; every gateway replica
	// needs the same key for a session to work on all of them. Empty: a
	// random key per process (sessions end with a restart).
	SessionKey []byte
	Now        func() time.Time
	Logger     *slog.Logger

	once    sync.Once
	history *history
	keyOnce sync.Once
	key     string
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
	"mask": MaskPhones,
}).ParseFS(templateFS, "templates/*.html"))

// Handler serves GET /ops, POST /ops/login, POST /ops/logout and
// POST /ops/review-cases/{id}/resolve.
func (p *Page) Handler() http.Handler {
	p.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+RoutePage, p.page)
	mux.HandleFunc("POST "+RouteLogin, p.login)
	mux.HandleFunc("POST "+RouteLogout, p.logout)
	mux.HandleFunc("POST "+RouteResolve, p.resolve)
	mux.HandleFunc("GET "+RouteCaseWorkflow, p.caseWorkflow)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.errorPage(w, http.StatusNotFound, "Not found", "There is no page "+r.Method+" "+r.URL.Path+".")
	})
	return securityHeaders(mux)
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

// --- authentication ---------------------------------------------------------

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
		if hmac.Equal([]byte(digestOf(tok)), []byte(digest)) {
			return tenant, tenant != ""
		}
	}
	return "", false
}

func digestOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (p *Page) lookup(got string) (tenant, digest string, ok bool) {
	if got == "" || p.Tokens == nil {
		return "", "", false
	}
	tenant, ok = p.Tokens.Authenticate(got)
	return tenant, digestOf(got), ok && tenant != ""
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
		tenant, digest, ok := p.lookup(strings.TrimSpace(tok))
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
	_, digest, ok := p.lookup(r.PostForm.Get("token"))
	if !ok {
		p.unauthenticated(w, "That token is not valid.")
		return
	}
	p.setSession(w, r, digest)
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

// --- the page ---------------------------------------------------------------

func (p *Page) page(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if _, digest, ok := p.lookup(tok); ok {
			p.setSession(w, r, digest)
			q := r.URL.Query()
			q.Del("token")
			target := RoutePage
			if len(q) > 0 {
				target += "?" + q.Encode()
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
		p.unauthenticated(w, "That token is not valid.")
		return
	}
	a, ok := p.authenticate(r)
	if !ok {
		p.unauthenticated(w, "")
		return
	}
	data, err := p.load(r.Context(), a)
	if err != nil {
		p.log().Error("load ops page", "tenant", a.tenant, "err", err)
		p.errorPage(w, http.StatusInternalServerError, "Internal error", "The ops page could not be loaded; see the gateway log.")
		return
	}
	if id := r.URL.Query().Get("resolved"); id != "" {
		data.Notice = fmt.Sprintf("Case %s resolved as %s; the workflow was signalled.", id, r.URL.Query().Get("action"))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := templates.ExecuteTemplate(w, "page.html", data); err != nil {
		p.log().Error("render ops page", "err", err)
	}
}

type caseView struct {
	ID           string
	Reason       review.Reason
	WorkflowID   string // masked for display
	WorkflowLink string
	OpenedAt     time.Time
	Age          string
	Details      []detail
	Actions      []review.Action
}

type outboxView struct {
	ID, Kind, Channel, Recipient, State, LastError, WorkflowID, WorkflowLink string
	Attempts                                                                 int
	CreatedAt                                                                time.Time
	Age                                                                      string
}

type inboxView struct {
	Provider, EventID, Kind, Channel, Customer string
	ReceivedAt                                 time.Time
	Age                                        string
}

type workflowView struct{ ID, Link, Why string }

type pageData struct {
	Tenant     string
	Now        time.Time
	CSRF       string
	Cookie     bool
	Notice     string
	Cases      []caseView
	Unknown    []caseView
	Outbox     []outboxView
	Inbox      []inboxView
	Counters   counterView
	Workflows  []workflowView
	UIBaseURL  string
	StaleAfter time.Duration
}

// ActionsFor are the decisions that fit a case's reason.
func ActionsFor(reason review.Reason) []review.Action {
	switch reason {
	case review.ReasonPotentialDuplicate:
		return []review.Action{review.ActionMerge, review.ActionSeparate, review.ActionAbandon}
	case review.ReasonUnknownOutcome:
		return []review.Action{review.ActionRetry, review.ActionProceed, review.ActionAbandon}
	case review.ReasonOrphanedEffect:
		// The person settled it by hand: kept (proceed) or undone (abandon).
		return []review.Action{review.ActionProceed, review.ActionAbandon}
	}
	return []review.Action{review.ActionMerge, review.ActionSeparate, review.ActionRetry, review.ActionAbandon, review.ActionProceed}
}

// linkFor links to a workflow: directly, or through RouteCaseWorkflow when
// the ID contains a phone number (caseID may be "": then no link).
func (p *Page) linkFor(id, caseID string) string {
	if p.UIBaseURL == "" || id == "" || MaskPhones(id) == id {
		return p.workflowLink(id)
	}
	if caseID == "" {
		return ""
	}
	return strings.Replace(RouteCaseWorkflow, "{id}", url.PathEscape(caseID), 1)
}

func (p *Page) caseWorkflow(w http.ResponseWriter, r *http.Request) {
	a, ok := p.authenticate(r)
	if !ok {
		p.unauthenticated(w, "")
		return
	}
	c, err := p.Reviews.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, review.ErrNotFound) || (err == nil && c.Tenant != a.tenant) {
		p.errorPage(w, http.StatusNotFound, "No such review case", fmt.Sprintf("There is no review case %q for tenant %s.", r.PathValue("id"), a.tenant))
		return
	} else if err != nil {
		p.errorPage(w, http.StatusInternalServerError, "Internal error", "The review case could not be loaded.")
		return
	}
	link := p.workflowLink(c.WorkflowID)
	if link == "" {
		p.errorPage(w, http.StatusNotFound, "No Web UI", "No Temporal Web UI is configured.")
		return
	}
	http.Redirect(w, r, link, http.StatusSeeOther)
}

func (p *Page) workflowLink(id string) string {
	if p.UIBaseURL == "" || id == "" {
		return ""
	}
	// encodeURIComponent semantics, as the Web UI builds its own links.
	esc := strings.ReplaceAll(url.QueryEscape(id), "+", "%20")
	return strings.TrimRight(p.UIBaseURL, "/") + "/namespaces/" + url.PathEscape(p.Namespace) + "/workflows/" + esc
}

func age(now, t time.Time) string {
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return d.String() + " ago"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func (p *Page) load(ctx context.Context, a auth) (*pageData, error) {
	now := p.now()
	d := &pageData{Tenant: a.tenant, Now: now, CSRF: a.csrf(p.sessionKey()), Cookie: a.cookie != "", UIBaseURL: p.UIBaseURL, StaleAfter: StaleAfter}
	cases, err := p.Reviews.ListOpen(ctx, a.tenant)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	addWF := func(id, caseID, why string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		d.Workflows = append(d.Workflows, workflowView{ID: MaskPhones(id), Link: p.linkFor(id, caseID), Why: why})
	}
	for _, c := range cases {
		v := caseView{
			ID: c.ID, Reason: c.Reason, WorkflowID: MaskPhones(c.WorkflowID), WorkflowLink: p.linkFor(c.WorkflowID, c.ID),
			OpenedAt: c.CreatedAt, Age: age(now, c.CreatedAt), Details: summarize(c.Details, 10), Actions: ActionsFor(c.Reason),
		}
		d.Cases = append(d.Cases, v)
		if c.Reason == review.ReasonUnknownOutcome {
			d.Unknown = append(d.Unknown, v)
		}
		addWF(c.WorkflowID, c.ID, "review case "+c.ID)
	}
	if err := p.loadOutbox(ctx, d, a.tenant, now); err != nil {
		return nil, err
	}
	for _, o := range d.Outbox {
		addWF(o.WorkflowID, "", "outbox "+o.ID+" ("+o.State+")")
	}
	if err := p.loadInbox(ctx, d, a.tenant, now); err != nil {
		return nil, err
	}
	for i := range d.Outbox {
		d.Outbox[i].WorkflowID = MaskPhones(d.Outbox[i].WorkflowID)
	}
	d.Counters = p.counters(a.tenant)
	return d, nil
}

func (p *Page) loadOutbox(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	rows, err := p.Pool.Query(ctx, `SELECT id, reference, kind, channel, recipient, state, attempts, coalesce(last_error, ''), created_at
		FROM outbox_messages
		WHERE tenant_id = $1 AND (state = 'review' OR (state = 'pending' AND created_at < $2))
		ORDER BY created_at, id LIMIT 100`, tenant, now.Add(-StaleAfter))
	if err != nil {
		return fmt.Errorf("list stuck outbox rows: %w", err)
	}
	d.Outbox, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxView, error) {
		var o outboxView
		var ref string
		err := r.Scan(&o.ID, &ref, &o.Kind, &o.Channel, &o.Recipient, &o.State, &o.Attempts, &o.LastError, &o.CreatedAt)
		o.WorkflowID, o.WorkflowLink = ref, p.linkFor(ref, "")
		o.Recipient, o.LastError = MaskPhones(o.Recipient), MaskPhones(o.LastError)
		o.Age = age(now, o.CreatedAt)
		return o, err
	})
	if err != nil {
		return fmt.Errorf("list stuck outbox rows: %w", err)
	}
	return nil
}

func (p *Page) loadInbox(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	rows, err := p.Pool.Query(ctx, `SELECT provider, event_id, kind, channel, customer, received_at
		FROM inbox_events WHERE tenant_id = $1 AND state = 'pending' AND received_at < $2
		ORDER BY received_at LIMIT 50`, tenant, now.Add(-StaleAfter))
	if err != nil {
		return fmt.Errorf("list pending inbox events: %w", err)
	}
	d.Inbox, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (inboxView, error) {
		var v inboxView
		err := r.Scan(&v.Provider, &v.EventID, &v.Kind, &v.Channel, &v.Customer, &v.ReceivedAt)
		v.Customer = MaskPhones(v.Customer)
		v.Age = age(now, v.ReceivedAt)
		return v, err
	})
	if err != nil {
		return fmt.Errorf("list pending inbox events: %w", err)
	}
	return nil
}

// --- resolving --------------------------------------------------------------

func validAction(a review.Action, reason review.Reason) bool {
	for _, x := range ActionsFor(reason) {
		if x == a {
			return true
		}
	}
	return false
}

func (p *Page) resolve(w http.ResponseWriter, r *http.Request) {
	a, ok := p.authenticate(r)
	if !ok {
		p.unauthenticated(w, "Sign in again, then repeat the decision.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	if a.cookie != "" && !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(a.csrf(p.sessionKey()))) {
		p.errorPage(w, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong; nothing was changed. Reload the page and try again.")
		return
	}
	action := review.Action(r.PostForm.Get("action"))
	if !validAction(action, "") {
		p.errorPage(w, http.StatusBadRequest, "Unknown action", fmt.Sprintf("%q is not a decision; use merge, separate, retry, abandon or proceed. Nothing was changed.", string(action)))
		return
	}
	id := r.PathValue("id")
	c, err := p.Reviews.Get(r.Context(), id)
	if errors.Is(err, review.ErrNotFound) || (err == nil && c.Tenant != a.tenant) {
		p.errorPage(w, http.StatusNotFound, "No such review case", fmt.Sprintf("There is no review case %q for tenant %s. Nothing was changed.", id, a.tenant))
		return
	} else if err != nil {
		p.log().Error("load review case", "case", id, "err", err)
		p.errorPage(w, http.StatusInternalServerError, "Internal error", "The review case could not be loaded; nothing was changed.")
		return
	}
	if !validAction(action, c.Reason) {
		p.errorPage(w, http.StatusBadRequest, "Action does not fit the case",
			fmt.Sprintf("A %s case can be resolved with %s, not %s. Nothing was changed.", c.Reason, joinActions(ActionsFor(c.Reason)), action))
		return
	}
	// A resolved case with the same action is a double click or a retry
	// after a lost signal: Resolve is idempotent for it and signals again
	// (the workflow ignores a second decision). Another action conflicts.
	if c.Status != "open" && c.Resolution != action {
		p.errorPage(w, http.StatusConflict, "Already resolved",
			fmt.Sprintf("Case %s was already resolved as %s. Nothing was changed.", c.ID, c.Resolution))
		return
	}
	if err := p.Resolve(r.Context(), a.tenant, c.ID, action); err != nil {
		p.log().Error("resolve review case", "case", c.ID, "action", action, "err", err)
		p.errorPage(w, http.StatusBadGateway, "Resolve failed",
			fmt.Sprintf("Resolving case %s as %s failed: %s. If the decision was recorded, resolving again with the same action signals the workflow again.", c.ID, action, MaskPhones(err.Error())))
		return
	}
	http.Redirect(w, r, RoutePage+"?"+url.Values{"resolved": {c.ID}, "action": {string(action)}}.Encode(), http.StatusSeeOther)
}

func joinActions(as []review.Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
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
