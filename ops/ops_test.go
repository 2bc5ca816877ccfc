package ops_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/ops"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/shopcal"
)

const (
	tenant   = "t1"
	token    = "tok-t1-secret"
	other    = "t2"
	otherTok = "tok-t2-secret"
	phone    = "+4915112345678"
	uiBase   = "http://ui.example:8233"
)

// signal is a decision the page's resolver sent to a workflow.
type signal struct {
	WorkflowID, Name string
	Decision         review.Decision
}

// signals records the resolver's signals and passes them on to next (a
// Temporal client), if set.
type signals struct {
	next review.Signaler
	mu   sync.Mutex
	sent []signal
}

func (s *signals) SignalWorkflow(ctx context.Context, workflowID, runID, name string, arg any) error {
	d, ok := arg.(review.Decision)
	if !ok {
		return fmt.Errorf("signal argument %T is no review.Decision", arg)
	}
	s.mu.Lock()
	s.sent = append(s.sent, signal{workflowID, name, d})
	s.mu.Unlock()
	if s.next == nil {
		return nil
	}
	return s.next.SignalWorkflow(ctx, workflowID, runID, name, arg)
}

func (s *signals) get() []signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]signal(nil), s.sent...)
}

type fixture struct {
	pool  *pgxpool.Pool
	page  *ops.Page
	srv   *httptest.Server
	rec   *signals
	inbox *prometheus.CounterVec
	now   time.Time
}

// newFixture serves a page whose resolver records its signals and resolves the
// case in PostgreSQL (the gateway's logic minus the Temporal signal).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool := testsupport.Database(t)
	store := &review.Store{Pool: pool}
	rec := &signals{}

	gw := prometheus.NewRegistry()
	inbox := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDuplicatesBlocked, Help: "h"}, []string{"layer", "tenant", "route"})
	gw.MustRegister(inbox)
	inbox.WithLabelValues("inbox", tenant, "/webhooks/twilio/whatsapp").Add(3)
	inbox.WithLabelValues("inbox", other, "/webhooks/twilio/whatsapp").Add(100)
	cal := prometheus.NewRegistry()
	idem := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDuplicatesBlocked, Help: "h"}, []string{"layer", "tenant", "route"})
	cal.MustRegister(idem)
	idem.WithLabelValues("idempotency", tenant, "POST /v1/bookings").Add(2)
	pay := prometheus.NewRegistry()
	idem2 := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDuplicatesBlocked, Help: "h"}, []string{"layer", "tenant", "route"})
	pay.MustRegister(idem2)
	idem2.WithLabelValues("idempotency", tenant, "POST /v1/payment_intents").Add(5)
	worker := prometheus.NewRegistry()
	dedup := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricDedupDecisions, Help: "h"}, []string{"decision", "channel_pair"})
	worker.MustRegister(dedup)
	dedup.WithLabelValues("merge", "voice+whatsapp").Add(4)
	repairs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: ops.MetricReconcilerRepairs, Help: "h"}, []string{"kind"})
	worker.MustRegister(repairs)
	repairs.WithLabelValues("void_authorisation").Add(2)
	lastSync := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: shopcal.MetricLastSync, Help: "h"}, []string{"tenant", "resource"})
	failing := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: shopcal.MetricFailing, Help: "h"}, []string{"tenant", "resource"})
	push := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: shopcal.MetricPush, Help: "h"}, []string{"tenant", "resource"})
	worker.MustRegister(lastSync, failing, push)
	push.WithLabelValues(tenant, "bay-1").Set(float64(time.Date(2031, 1, 2, 3, 4, 0, 0, time.UTC).Unix()))
	lastSync.WithLabelValues(tenant, "bay-1").Set(float64(time.Now().Add(-45 * time.Second).Unix()))
	failing.WithLabelValues(tenant, "bay-1").Set(0)
	failing.WithLabelValues(tenant, "bay-2").Set(1)
	lastSync.WithLabelValues(other, "lift-9").Set(1)

	f := &fixture{pool: pool, rec: rec, inbox: inbox, now: time.Now()}
	f.page = &ops.Page{
		Pool: pool, Reviews: &review.Resolver{Store: store, Temporal: rec},
		Gatherers: []prometheus.Gatherer{gw, cal, pay, worker},
		UIBaseURL: uiBase, Namespace: "default",
		Tokens: ops.StaticTokens{token: tenant, otherTok: other},
	}
	f.srv = httptest.NewServer(f.page.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) insertCase(t *testing.T, id, tn, wf string, reason review.Reason, details string) {
	t.Helper()
	_, err := f.pool.Exec(context.Background(), `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, details, idempotency_key, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, now() - interval '5 minutes')`, id, tn, wf, string(reason), details, "test/"+id)
	require.NoError(t, err)
}

func (f *fixture) status(t *testing.T, id string) string {
	t.Helper()
	var s string
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT status FROM review_cases WHERE id = $1`, id).Scan(&s))
	return s
}

func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

func get(t *testing.T, c *http.Client, u, bearer string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return do(t, c, req)
}

func post(t *testing.T, c *http.Client, u, bearer string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return do(t, c, req)
}

// login signs a browser-like client in with the sign-in form and returns
// it and the page's CSRF token.
func (f *fixture) login(t *testing.T) (*http.Client, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := noRedirect(jar)
	res := testsupport.OpsSignIn(t, c, f.srv.URL, token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops", res.Header.Get("Location"))
	set := strings.Join(res.Header.Values("Set-Cookie"), "\n")
	require.Contains(t, set, ops.CookieName+"=")
	require.Contains(t, set, "HttpOnly")
	require.Contains(t, set, "SameSite=Strict")
	require.Contains(t, set, "Path=/ops")
	require.NotContains(t, set, token, "the cookie is not the token")

	res, body := get(t, c, f.srv.URL+"/ops", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(body)
	require.NotNil(t, m, "page carries a CSRF token")
	return c, m[1]
}

func TestUnauthenticatedGetsTheTokenPrompt(t *testing.T) {
	f := newFixture(t)
	f.insertCase(t, "rc_auth", tenant, "wf-auth", review.ReasonPotentialDuplicate, `{}`)
	c := noRedirect(nil)

	res, body := get(t, c, f.srv.URL+"/ops", "")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
	require.Contains(t, body, `name="token"`, "a token prompt")
	require.NotContains(t, body, "rc_auth")

	// A token in the URL signs nobody in (it would end up in history and
	// access logs): the page is the sign-in form, and no session is set.
	res, body = get(t, c, f.srv.URL+"/ops?token="+token, "")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, body, `name="token"`)
	require.NotContains(t, body, "rc_auth")
	requireNoSession(t, res)

	res, _ = get(t, c, f.srv.URL+"/ops", "wrong")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)

	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/ops", nil)
	req.AddCookie(&http.Cookie{Name: ops.CookieName, Value: "99999999999.deadbeef"})
	res, _ = do(t, c, req)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "a forged cookie")

	res, _ = post(t, c, f.srv.URL+"/ops/review-cases/rc_auth/resolve", "", url.Values{"action": {"merge"}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Empty(t, f.rec.get())
	require.Equal(t, "open", f.status(t, "rc_auth"))

	// A login form without its CSRF token (login CSRF: another site
	// posting its own token) signs nobody in.
	res, _ = post(t, c, f.srv.URL+"/ops/login", "", url.Values{"token": {token}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	requireNoSession(t, res)

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	res = testsupport.OpsSignIn(t, noRedirect(jar), f.srv.URL, "wrong")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "a wrong token")
	requireNoSession(t, res)

	// The prompt's form signs in without the token in the URL.
	res = testsupport.OpsSignIn(t, noRedirect(jar), f.srv.URL, token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Set-Cookie"), ops.CookieName+"=")
}

// requireNoSession: res sets no session cookie (a fresh sign-in form's
// pre-session cookie is fine).
func requireNoSession(t *testing.T, res *http.Response) {
	t.Helper()
	for _, c := range res.Cookies() {
		require.NotEqual(t, ops.CookieName, c.Name, "no session")
	}
}

func TestPageShowsQueueMaskedCountersAndUnknownOutcomes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	wf := "customer:" + tenant + ":" + phone
	f.insertCase(t, "rc_dup1", tenant, wf, review.ReasonPotentialDuplicate,
		`{"intent":{"customer":"`+phone+`","service":"haircut","channel":"voice"},"conflicting_intent":"in_7","conflicting_workflow":"appointment:t1:in_7"}`)
	f.insertCase(t, "rc_unk1", tenant, "appointment:t1:in_9", review.ReasonUnknownOutcome, `{"step":"calendar","error":"context deadline exceeded"}`)
	f.insertCase(t, "rc_other", other, "customer:t2:+4930111111199", review.ReasonPotentialDuplicate, `{}`)
	_, err := f.pool.Exec(ctx, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, idempotency_key, created_at) VALUES
		('ob_review', $1, 'appointment:t1:in_9', 'confirmation', 'whatsapp', 'whatsapp:`+phone+`', 'Hallo', 'review', 'k1', now() - interval '1 minute'),
		('ob_stuck', $1, 'appointment:t1:in_8', 'confirmation', 'sms', '`+phone+`', 'Hallo', 'pending', 'k2', now() - interval '10 minutes'),
		('ob_fresh', $1, 'appointment:t1:in_6', 'confirmation', 'sms', '`+phone+`', 'Hallo', 'pending', 'k3', now() - interval '30 seconds'),
		('ob_sent', $1, 'appointment:t1:in_5', 'confirmation', 'sms', '`+phone+`', 'Hallo', 'sent', 'k4', now() - interval '1 hour'),
		('ob_t2', $2, 'appointment:t2:in_1', 'confirmation', 'sms', '`+phone+`', 'Hallo', 'review', 'k5', now() - interval '1 hour'),
		('ob_expired', $1, 'booking:appointment:t1:in_4', 'reminder2h0m0s', 'sms', '`+phone+`', 'Hallo', 'expired', 'k6', now() - interval '1 hour'),
		('ob_failed', $1, 'booking:appointment:t1:in_3', 'reminder24h0m0s', 'whatsapp', 'whatsapp:`+phone+`', 'Hallo', 'failed', 'k7', now() - interval '1 hour')`, tenant, other)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `UPDATE outbox_messages SET last_error = 'delivery failed: Twilio error 63016 (free-form WhatsApp text outside the 24-hour window)' WHERE id = 'ob_failed'`)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `INSERT INTO inbox_events (provider, event_id, tenant_id, kind, customer, channel, payload, received_at) VALUES
		('twilio', 'SM_stuck', $1, 'message', $2, 'whatsapp', '{}', now() - interval '5 minutes')`, tenant, phone)
	require.NoError(t, err)

	res, body := get(t, http.DefaultClient, f.srv.URL+"/ops", token)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")

	// (1) the tenant's queue, nothing of the other tenant's
	require.Contains(t, body, `id="case-rc_dup1"`)
	require.Contains(t, body, `id="case-rc_unk1"`)
	require.NotContains(t, body, "rc_other")
	require.Contains(t, body, `action="/ops/review-cases/rc_dup1/resolve"`)
	for _, a := range []string{"merge", "separate", "abandon", "retry"} {
		require.Contains(t, body, `value="`+a+`"`)
	}
	require.Contains(t, body, "haircut", "details summary")
	// masked numbers: country code and last two digits only
	require.NotContains(t, body, "15112345", "no full number anywhere in the text")
	require.Contains(t, body, "&#43;49·········78")
	// (4) workflow links to the Web UI, the ID encoded as one path segment
	require.Contains(t, body, `href="`+uiBase+`/namespaces/default/workflows/appointment%3At1%3Ain_9"`)
	// a workflow ID with a phone number is linked through a redirect, so
	// the number is not even in an href
	require.Contains(t, body, `href="/ops/review-cases/rc_dup1/workflow"`)
	res, _ = get(t, noRedirect(nil), f.srv.URL+"/ops/review-cases/rc_dup1/workflow", token)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, uiBase+"/namespaces/default/workflows/customer%3At1%3A%2B4915112345678", res.Header.Get("Location"))
	res, _ = get(t, noRedirect(nil), f.srv.URL+"/ops/review-cases/rc_other/workflow", token)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	// (2) counters per layer for this tenant, summed over registries
	require.Contains(t, body, `id="layer-inbox" data-total="3"`)
	require.Contains(t, body, `id="layer-idempotency" data-total="7"`)
	require.Contains(t, body, "merge · voice&#43;whatsapp")
	require.Contains(t, body, `id="repair-void_authorisation" data-total="2"`, "the reconciler's repairs")
	// the shop's calendars: failing first, the other tenant's not at all
	require.Regexp(t, `id="calendar-bay-2" data-failing="true">.*polling only.*\n.*id="calendar-bay-1" data-failing="false"><td>bay-1</td><td title="[^"]+">4\ds ago</td><td class="push">until 2031-01-02 03:04 UTC</td>`, body)
	require.NotContains(t, body, "lift-9")
	// (3) unknown outcomes
	require.Contains(t, body, `id="outbox-ob_review"`)
	require.Contains(t, body, `id="outbox-ob_stuck"`)
	require.Contains(t, body, `id="outbox-ob_expired"`, "a message not sent because its moment passed")
	require.Contains(t, body, `id="outbox-ob_failed"`, "a message the provider could not deliver")
	require.Contains(t, body, "Twilio error 63016")
	require.NotContains(t, body, "ob_fresh")
	require.NotContains(t, body, "ob_sent")
	require.NotContains(t, body, "ob_t2")
	require.Contains(t, body, "twilio/SM_stuck")
	require.Contains(t, body, "context deadline exceeded")

	// The history: a second load in a later minute shows the increase.
	f.page.Now = func() time.Time { return time.Now().Add(time.Minute) }
	f.inbox.WithLabelValues("inbox", tenant, "/webhooks/twilio/voice").Add(2)
	_, body = get(t, http.DefaultClient, f.srv.URL+"/ops", token)
	require.Contains(t, body, `id="layer-inbox" data-total="5"`)
	require.Regexp(t, `id="layer-inbox" data-total="5"><td>inbox</td><td class="num">5</td><td class="num">\+2</td>`, body)
	require.Contains(t, body, "<svg class=\"spark\"")
}

func TestResolveViaFormSignalsOnceAndTheCaseDisappears(t *testing.T) {
	f := newFixture(t)
	f.insertCase(t, "rc_dup1", tenant, "customer:t1:"+phone, review.ReasonPotentialDuplicate, `{}`)
	c, csrf := f.login(t)

	res, body := post(t, c, f.srv.URL+"/ops/review-cases/rc_dup1/resolve", "", url.Values{"action": {"separate"}, "csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	require.Equal(t, "/ops?action=separate&resolved=rc_dup1", res.Header.Get("Location"))
	require.Equal(t, []signal{{"customer:t1:" + phone, review.SignalDecision, review.Decision{CaseID: "rc_dup1", Action: review.ActionSeparate}}}, f.rec.get())
	require.Equal(t, "resolved", f.status(t, "rc_dup1"))

	res, body = get(t, c, f.srv.URL+res.Header.Get("Location"), "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotContains(t, body, `id="case-rc_dup1"`)
	require.Contains(t, body, "Case rc_dup1 resolved as separate")
	require.Contains(t, body, `id="queue-empty"`)

	// Another action on the resolved case conflicts and changes nothing.
	res, body = post(t, c, f.srv.URL+"/ops/review-cases/rc_dup1/resolve", "", url.Values{"action": {"merge"}, "csrf": {csrf}})
	require.Equal(t, http.StatusConflict, res.StatusCode, body)
	require.Len(t, f.rec.get(), 1)

	// A bearer client needs no CSRF token (browsers never send one on their own).
	f.insertCase(t, "rc_unk1", tenant, "appointment:t1:in_9", review.ReasonUnknownOutcome, `{}`)
	res, body = post(t, noRedirect(nil), f.srv.URL+"/ops/review-cases/rc_unk1/resolve", token, url.Values{"action": {"retry"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	require.Equal(t, signal{"appointment:t1:in_9", review.SignalDecision, review.Decision{CaseID: "rc_unk1", Action: review.ActionRetry}}, f.rec.get()[1])
}

func TestResolveRejectsBadInputAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	f.insertCase(t, "rc_dup1", tenant, "customer:t1:"+phone, review.ReasonPotentialDuplicate, `{}`)
	f.insertCase(t, "rc_other", other, "customer:t2:x", review.ReasonPotentialDuplicate, `{}`)
	c, csrf := f.login(t)
	resolve := func(id string, form url.Values) (*http.Response, string) {
		return post(t, c, f.srv.URL+"/ops/review-cases/"+id+"/resolve", "", form)
	}

	res, body := resolve("rc_nope", url.Values{"action": {"merge"}, "csrf": {csrf}})
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	require.Contains(t, body, "No such review case")
	require.Contains(t, body, "rc_nope")

	res, _ = resolve("rc_other", url.Values{"action": {"merge"}, "csrf": {csrf}})
	require.Equal(t, http.StatusNotFound, res.StatusCode, "another tenant's case does not exist for this one")

	res, body = resolve("rc_dup1", url.Values{"action": {"delete"}, "csrf": {csrf}})
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, body, "Unknown action")

	res, body = resolve("rc_dup1", url.Values{"action": {"retry"}, "csrf": {csrf}})
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "retry does not decide a potential duplicate")
	require.Contains(t, body, "merge, separate, abandon")

	res, body = resolve("rc_dup1", url.Values{"action": {"merge"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, "no CSRF token")
	require.Contains(t, body, "CSRF")

	res, _ = resolve("rc_dup1", url.Values{"action": {"merge"}, "csrf": {strings.Repeat("0", 64)}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, "wrong CSRF token")

	// Another tenant's session token is no CSRF token for this session.
	_, otherCSRF := func() (*http.Client, string) {
		jar, _ := cookiejar.New(nil)
		oc := noRedirect(jar)
		testsupport.OpsSignIn(t, oc, f.srv.URL, otherTok)
		_, b := get(t, oc, f.srv.URL+"/ops", "")
		return oc, regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(b)[1]
	}()
	res, _ = resolve("rc_dup1", url.Values{"action": {"merge"}, "csrf": {otherCSRF}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	res, _ = get(t, c, f.srv.URL+"/ops/review-cases/rc_dup1/resolve?action=merge", "")
	require.Equal(t, http.StatusNotFound, res.StatusCode, "GET changes nothing")

	require.Empty(t, f.rec.get(), "no workflow was signalled")
	require.Equal(t, "open", f.status(t, "rc_dup1"))
	require.Equal(t, "open", f.status(t, "rc_other"))
}
