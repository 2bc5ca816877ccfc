package ops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/review"
)

func (p *Page) page(w http.ResponseWriter, r *http.Request) {
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
	if id := r.URL.Query().Get("booking"); id != "" {
		data.Notice = p.changedNotice(r.Context(), a.tenant, id)
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
	Unmatched  []unmatchedView
	Disabled   []disabledEndpointView // the tenant's webhook endpoints that are off
	Counters   counterView
	Workflows  []workflowView
	UIBaseURL  string
	StaleAfter time.Duration
	bookingsData
}

// linkFor links to a workflow: directly, or through RouteCaseWorkflow when
// the ID contains a phone number (caseID may be "": then no link).
func (p *Page) linkFor(id, caseID string) string {
	if p.UIBaseURL == "" || id == "" || mask.Phones(id) == id {
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
	c, err := p.Reviews.Store.Get(r.Context(), r.PathValue("id"))
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
	cases, err := p.Reviews.Store.ListOpen(ctx, a.tenant)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	addWF := func(id, caseID, why string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		d.Workflows = append(d.Workflows, workflowView{ID: mask.Phones(id), Link: p.linkFor(id, caseID), Why: why})
	}
	for _, c := range cases {
		v := caseView{
			ID: c.ID, Reason: c.Reason, WorkflowID: mask.Phones(c.WorkflowID), WorkflowLink: p.linkFor(c.WorkflowID, c.ID),
			OpenedAt: c.CreatedAt, Age: age(now, c.CreatedAt), Details: summarize(c.Details, 10), Actions: review.ActionsFor(c.Reason),
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
	if err := p.loadUnmatched(ctx, d, a.tenant, now); err != nil {
		return nil, err
	}
	if err := p.loadDisabledEndpoints(ctx, d, a.tenant, now); err != nil {
		return nil, err
	}
	if err := p.loadBookings(ctx, d, a.tenant, now); err != nil {
		// The rest of the page matters most when Temporal is down.
		p.log().Error("load ops page: bookings", "tenant", a.tenant, "err", err)
		d.BookingsError = "The bookings could not be listed (Temporal did not answer); see the gateway log."
	}
	for i := range d.Outbox {
		d.Outbox[i].WorkflowID = mask.Phones(d.Outbox[i].WorkflowID)
	}
	d.Counters = p.counters(a.tenant)
	return d, nil
}

// ExpiredShownFor is how long a customer message recorded as not sent
// (its moment passed, see outbox.Message.SendBy) or failed (the provider
// refused it, or reported it undelivered: WhatsApp's 63016 outside the
// customer's window) stays on the page: the customer was not told, and
// someone may want to call them.
const ExpiredShownFor = 7 * 24 * time.Hour

func (p *Page) loadOutbox(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	rows, err := p.Pool.Query(ctx, `SELECT id, reference, kind, channel, recipient, state, attempts, coalesce(last_error, ''), created_at
		FROM outbox_messages
		WHERE tenant_id = $1 AND (state = 'review' OR (state = 'pending' AND created_at < $2)
		      OR (state IN ('expired', 'failed') AND updated_at > $3))
		ORDER BY created_at, id LIMIT 100`, tenant, now.Add(-StaleAfter), now.Add(-ExpiredShownFor))
	if err != nil {
		return fmt.Errorf("list stuck outbox rows: %w", err)
	}
	d.Outbox, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (outboxView, error) {
		var o outboxView
		var ref string
		err := r.Scan(&o.ID, &ref, &o.Kind, &o.Channel, &o.Recipient, &o.State, &o.Attempts, &o.LastError, &o.CreatedAt)
		o.WorkflowID, o.WorkflowLink = ref, p.linkFor(ref, "")
		o.Recipient, o.LastError = mask.Phones(o.Recipient), mask.Phones(o.LastError)
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
		v.Customer = mask.Phones(v.Customer)
		v.Age = age(now, v.ReceivedAt)
		return v, err
	})
	if err != nil {
		return fmt.Errorf("list pending inbox events: %w", err)
	}
	return nil
}
