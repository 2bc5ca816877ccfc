package shopcal

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FakeGraph is Microsoft Graph's calendar API and the Microsoft identity
// platform's token endpoint as far as bookonce uses them, with their
// rules, for tests and the drill (Microsoft cannot be reached from here):
//
//   - POST /{tenant}/oauth2/v2.0/token grants an app-only access token
//     (client credentials, scope https://graph.microsoft.com/.default) to
//     ClientID in a tenant that consented (Consent); it expires.
//   - /v1.0/users/{user}/calendars/{calendar}/events: create (POST), get
//     by filter on a single-value extended property, update (PATCH) and
//     delete by Graph's own ID, and calendarView (recurring events
//     expanded) on calendars made with AddCalendar; else 404
//     ErrorItemNotFound. Every call needs a live token (else 401).
//   - Graph chooses event IDs. A create that repeats the transactionId of
//     an event still in the calendar returns that event instead of a
//     second one (Graph's guard for a client retrying a create).
//   - Every change gives a new @odata.etag; If-Match with an older one is
//     412 ErrorIrresolvableConflict.
//   - Throttle makes the next calls answer 429 with Retry-After.
//   - Subscriptions to a calendar's events (fakegraph_subs.go): created
//     after the validation handshake with the notification URL (HTTPS),
//     for at most 10080 minutes, renewed by PATCH, deleted; every change
//     is posted to the URL with the clientState, retried until answered
//     2xx within 3 s.
type FakeGraph struct {
	ClientID, ClientSecret string

	mu        sync.Mutex
	consented map[string]bool      // Entra tenant -> admin consent
	access    map[string]time.Time // token -> expiry
	calendars map[string]map[string]*graphEvent
	throttled int
	seq       int64
	calls     map[string]int
	now       func() time.Time
	tenantOf  map[string]string // token -> Entra tenant
	subs      map[string]*graphSub
	push      *pusher
}

// NewFakeGraph returns a fake whose app registration is id and secret.
func NewFakeGraph(clientID, clientSecret string) *FakeGraph {
	return &FakeGraph{ClientID: clientID, ClientSecret: clientSecret, consented: map[string]bool{}, access: map[string]time.Time{},
		calendars: map[string]map[string]*graphEvent{}, calls: map[string]int{}, now: time.Now,
		tenantOf: map[string]string{}, subs: map[string]*graphSub{},
		push: &pusher{timeout: 3 * time.Second, attempts: 5, retry: func(s int) bool { return s >= 300 }}}
}

// AddCalendar makes the calendar of a user's mailbox in a tenant that
// consented to the app.
func (f *FakeGraph) AddCalendar(tenant, user, calendar string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consented[tenant] = true
	f.calendars[strings.ToLower(user)+"/"+calendar] = map[string]*graphEvent{}
}

// Withdraw revokes the tenant's consent: no token, and the ones issued
// stop working.
func (f *FakeGraph) Withdraw(tenant string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.consented[tenant] = false
	f.access = map[string]time.Time{}
}

// Throttle answers the next n calendar calls 429.
func (f *FakeGraph) Throttle(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttled += n
}

// Put stores an event staff entered in Outlook; it returns Graph's ID.
func (f *FakeGraph) Put(user, calendar string, ev GraphEvent) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &graphEvent{GraphEvent: ev}
	if e.ID == "" {
		e.ID = "AAMkAD" + randomHex(12)
	}
	f.stamp(e)
	f.calendars[strings.ToLower(user)+"/"+calendar][e.ID] = e
	f.changed(strings.ToLower(user)+"/"+calendar, "created", e.ID)
	return e.ID
}

// Events lists a calendar's events as stored.
func (f *FakeGraph) Events(user, calendar string) []GraphEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []GraphEvent
	for _, e := range f.calendars[strings.ToLower(user)+"/"+calendar] {
		out = append(out, e.GraphEvent)
	}
	slices.SortFunc(out, func(a, b GraphEvent) int { return strings.Compare(a.Start.DateTime, b.Start.DateTime) })
	return out
}

// Calls counts the calendar calls answered, by "METHOD kind".
func (f *FakeGraph) Calls(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

type graphEvent struct {
	GraphEvent
	etag string
}

// Handler serves the token endpoint and the calendar API.
func (f *FakeGraph) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", f.token)
	const events = "/v1.0/users/{user}/calendars/{cal}/events"
	mux.HandleFunc("POST "+events, f.authed("create", f.create))
	mux.HandleFunc("GET "+events, f.authed("find", f.find))
	mux.HandleFunc("PATCH "+events+"/{id}", f.authed("update", f.update))
	mux.HandleFunc("DELETE "+events+"/{id}", f.authed("delete", f.delete))
	mux.HandleFunc("GET /v1.0/users/{user}/calendars/{cal}/calendarView", f.authed("view", f.view))
	mux.HandleFunc("POST /v1.0/subscriptions", f.subscribe)
	mux.HandleFunc("PATCH /v1.0/subscriptions/{id}", f.renew)
	mux.HandleFunc("DELETE /v1.0/subscriptions/{id}", f.unsubscribe)
	return mux
}

func (f *FakeGraph) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.PostFormValue("client_id") != f.ClientID || r.PostFormValue("client_secret") != f.ClientSecret:
		writeGoogleJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
	case r.PostFormValue("grant_type") != "client_credentials" || r.PostFormValue("scope") != "https://graph.microsoft.com/.default":
		writeGoogleJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "AADSTS900144: grant_type and scope."})
	case !f.consented[r.PathValue("tenant")]:
		writeGoogleJSON(w, http.StatusBadRequest, map[string]string{"error": "unauthorized_client", "error_description": "AADSTS700016: the application was not found in the directory or consent was withdrawn."})
	default:
		tok := "eyJ0eXAi." + randomHex(20)
		f.access[tok] = f.now().Add(time.Hour)
		f.tenantOf[tok] = r.PathValue("tenant")
		writeGoogleJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": tok})
	}
}

func (f *FakeGraph) authed(kind string, h func(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.tokenTenant(w, r); !ok {
			return
		}
		events, ok := f.calendars[strings.ToLower(r.PathValue("user"))+"/"+r.PathValue("cal")]
		if !ok {
			graphError(w, http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
			return
		}
		f.calls[r.Method+" "+kind]++
		h(w, r, events)
	}
}

// tokenTenant checks the access token and any throttling (under f.mu)
// and returns the tenant the token is of.
func (f *FakeGraph) tokenTenant(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if exp, ok := f.access[tok]; !ok || !exp.After(f.now()) {
		graphError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "Access token is empty or has expired.")
		return "", false
	}
	if f.throttled > 0 {
		f.throttled--
		w.Header().Set("Retry-After", "1")
		graphError(w, http.StatusTooManyRequests, "ApplicationThrottled", "Application is over its MailboxConcurrency limit.")
		return "", false
	}
	return f.tenantOf[tok], true
}

func (f *FakeGraph) create(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent) {
	var ev GraphEvent
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.Start.DateTime == "" || ev.End.DateTime == "" {
		graphError(w, http.StatusBadRequest, "ErrorInvalidRequest", "Your request can't be completed: start and end are required.")
		return
	}
	if ev.TransactionID != "" {
		for _, e := range events {
			if e.TransactionID == ev.TransactionID {
				writeGoogleJSON(w, http.StatusCreated, e.wire())
				return
			}
		}
	}
	e := &graphEvent{GraphEvent: ev}
	e.ID = "AAMkAD" + randomHex(12)
	f.stamp(e)
	events[e.ID] = e
	f.changed(calendarKey(r), "created", e.ID)
	writeGoogleJSON(w, http.StatusCreated, e.wire())
}

// propertyFilter is the one $filter bookonce sends: events whose
// single-value extended property id has value.
var propertyFilter = regexp.MustCompile(`^singleValueExtendedProperties/Any\(ep: ep/id eq '([^']+)' and ep/value eq '([^']+)'\)$`)

func (f *FakeGraph) find(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent) {
	m := propertyFilter.FindStringSubmatch(r.URL.Query().Get("$filter"))
	if m == nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidUrlQueryFilter", "The query filter contains one or more invalid nodes.")
		return
	}
	items := []any{}
	for _, e := range events {
		for _, p := range e.Properties {
			if p.ID == m[1] && p.Value == m[2] {
				items = append(items, e.wire())
			}
		}
	}
	writeGoogleJSON(w, http.StatusOK, map[string]any{"value": items})
}

func (f *FakeGraph) update(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent) {
	e, ok := events[r.PathValue("id")]
	if !ok {
		graphError(w, http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != e.etag {
		graphError(w, http.StatusPreconditionFailed, "ErrorIrresolvableConflict", "The send or update operation could not be performed because the change key passed in the request does not match the current change key for the item.")
		return
	}
	var patch GraphEvent
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidRequest", "Your request can't be completed.")
		return
	}
	e.Subject, e.Body = patch.Subject, patch.Body
	if patch.Start.DateTime != "" {
		e.Start, e.End = patch.Start, patch.End
	}
	f.stamp(e)
	f.changed(calendarKey(r), "updated", e.ID)
	writeGoogleJSON(w, http.StatusOK, e.wire())
}

func (f *FakeGraph) delete(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent) {
	e, ok := events[r.PathValue("id")]
	switch {
	case !ok:
		graphError(w, http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
	case r.Header.Get("If-Match") != "" && r.Header.Get("If-Match") != e.etag:
		graphError(w, http.StatusPreconditionFailed, "ErrorIrresolvableConflict", "The change key does not match.")
	default:
		delete(events, e.ID)
		f.changed(calendarKey(r), "deleted", e.ID)
		w.WriteHeader(http.StatusNoContent)
	}
}

// view is calendarView: the events and instances of recurring ones that
// overlap [startDateTime, endDateTime), in UTC, a page at a time
// ($top, @odata.nextLink).
func (f *FakeGraph) view(w http.ResponseWriter, r *http.Request, events map[string]*graphEvent) {
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("startDateTime"))
	to, err2 := time.Parse(time.RFC3339, q.Get("endDateTime"))
	if err1 != nil || err2 != nil {
		graphError(w, http.StatusBadRequest, "ErrorInvalidParameter", "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.")
		return
	}
	var all []GraphEvent
	for _, e := range events {
		all = append(all, e.instances(from, to)...)
	}
	slices.SortFunc(all, func(a, b GraphEvent) int { return strings.Compare(a.Start.DateTime+a.ID, b.Start.DateTime+b.ID) })
	top, _ := strconv.Atoi(q.Get("$top"))
	if top <= 0 {
		top = 10 // Graph's default page
	}
	skip, _ := strconv.Atoi(q.Get("$skip"))
	page := map[string]any{"value": []GraphEvent{}}
	if skip < len(all) {
		page["value"] = all[skip:min(skip+top, len(all))]
	}
	if skip+top < len(all) {
		next := *r.URL
		nq := next.Query()
		nq.Set("$skip", strconv.Itoa(skip+top))
		next.RawQuery = nq.Encode()
		page["@odata.nextLink"] = "http://" + r.Host + next.String()
	}
	writeGoogleJSON(w, http.StatusOK, page)
}

func (f *FakeGraph) stamp(e *graphEvent) {
	f.seq++
	e.etag = `W/"DwAAABYAAA` + strconv.FormatInt(f.seq, 10) + `"`
}

// wire is the event as Graph answers it, with its ETag.
func (e *graphEvent) wire() GraphEvent {
	out := e.GraphEvent
	out.ETag = e.etag
	return out
}

// calendarKey is the calendar a request's path names.
func calendarKey(r *http.Request) string {
	return strings.ToLower(r.PathValue("user")) + "/" + r.PathValue("cal")
}

func graphError(w http.ResponseWriter, status int, code, message string) {
	writeGoogleJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": message}})
}

// instances are the event's occurrences overlapping [from, to): itself,
// or for a series master (daily or weekly pattern, a numbered or dated
// range) each occurrence, as calendarView answers them.
func (e *graphEvent) instances(from, to time.Time) []GraphEvent {
	start, err1 := parseGraphTime(e.Start, time.UTC)
	end, err2 := parseGraphTime(e.End, time.UTC)
	if err1 != nil || err2 != nil {
		return nil
	}
	one := func(s time.Time, id, kind string) []GraphEvent {
		if !s.Add(end.Sub(start)).After(from) || !s.Before(to) {
			return nil
		}
		ev := e.wire()
		ev.ID, ev.Type, ev.Recurrence = id, kind, nil
		if kind == "occurrence" {
			ev.SeriesMasterID = e.ID
		}
		ev.Start, ev.End = graphTime(s), graphTime(s.Add(end.Sub(start)))
		return []GraphEvent{ev}
	}
	rec := e.Recurrence
	if rec == nil {
		return one(start, e.ID, "singleInstance")
	}
	step := 24 * time.Hour * time.Duration(max(rec.Pattern.Interval, 1))
	if rec.Pattern.Type == "weekly" {
		step *= 7
	}
	until, _ := time.Parse(time.DateOnly, rec.Range.EndDate)
	var out []GraphEvent
	for i, s := 0, start; ; i, s = i+1, s.Add(step) {
		if (rec.Range.Type == "numbered" && i >= rec.Range.NumberOfOccurrences) || (rec.Range.Type == "endDate" && s.After(until.Add(24*time.Hour))) || !s.Before(to) {
			return out
		}
		out = append(out, one(s, e.ID+"_occ"+strconv.Itoa(i), "occurrence")...)
	}
}
