package shopcal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	gcal "google.golang.org/api/calendar/v3"
)

// FakeGoogle is Google Calendar API v3 and Google's OAuth 2.0 token
// endpoint as far as bookonce uses them, with Google's rules, for tests
// and the drill (Google cannot be reached from here):
//
//   - POST /token trades a refresh token (of ClientID) for an access
//     token that expires; a revoked refresh token is invalid_grant. Every
//     calendar call needs a live access token (else 401 authError).
//   - events insert, get, update (PUT), delete and list under
//     /calendar/v3/calendars/{calendarId}/events, on calendars made with
//     AddCalendar (else 404 notFound).
//   - A client-chosen event ID must be 5 to 1024 characters of base32hex
//     (a-v, 0-9); inserting an ID that exists, a deleted event's too, is
//     409 duplicate. A deleted event is kept as status "cancelled": get
//     returns it, delete again is 410 deleted, update revives it.
//   - Every change gives a new ETag; If-Match with an older one is 412
//     conditionNotMet.
//   - list honours timeMin, timeMax, showDeleted, singleEvents (RRULE and
//     EXDATE instances expanded, IDs "<id>_<start>"), maxResults and
//     pageToken.
//   - RateLimit makes the next calls answer 429 or 403 rateLimitExceeded.
//   - events.watch opens a push channel (web_hook, HTTPS address, an ID
//     unique to the project, ttl up to a month): a "sync" message at
//     once, then an "exists" message on every change to the calendar,
//     until it expires or channels.stop closes it (fakegoogle_watch.go).
type FakeGoogle struct {
	ClientID, ClientSecret string

	mu        sync.Mutex
	refresh   map[string]bool      // refresh token -> valid
	access    map[string]time.Time // access token -> expiry
	calendars map[string]map[string]*gcal.Event
	limited   []int // statuses for the next calendar calls
	version   int64
	calls     map[string]int // "METHOD kind" -> count
	now       func() time.Time
	channels  map[string]*googleChannel
	push      *pusher
}

// NewFakeGoogle returns a fake whose OAuth client is id and secret.
func NewFakeGoogle(clientID, clientSecret string) *FakeGoogle {
	return &FakeGoogle{ClientID: clientID, ClientSecret: clientSecret, refresh: map[string]bool{}, access: map[string]time.Time{},
		calendars: map[string]map[string]*gcal.Event{}, calls: map[string]int{}, now: time.Now, channels: map[string]*googleChannel{},
		push: &pusher{timeout: 30 * time.Second, attempts: 5, retry: func(s int) bool { return s == 500 || s == 502 || s == 503 || s == 504 }}}
}

// AddCalendar makes a calendar that refreshToken may use (the shop's
// consent) and returns the refresh token.
func (f *FakeGoogle) AddCalendar(id string) (refreshToken string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calendars[id] = map[string]*gcal.Event{}
	tok := "1//" + randomHex(16)
	f.refresh[tok] = true
	return tok
}

// Revoke withdraws the shop's consent: the refresh token is refused and
// every access token it gave stops working.
func (f *FakeGoogle) Revoke(refreshToken string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh[refreshToken] = false
	f.access = map[string]time.Time{}
}

// RateLimit answers the next calendar calls with these statuses (429, or
// 403 as Google's usage limits do), in order.
func (f *FakeGoogle) RateLimit(statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited = append(f.limited, statuses...)
}

// Put stores ev (an event staff entered, in a calendar app) as it is.
func (f *FakeGoogle) Put(calendarID string, ev gcal.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Status == "" {
		ev.Status = "confirmed"
	}
	f.stamp(&ev)
	f.calendars[calendarID][ev.Id] = &ev
	f.changed(calendarID)
}

// Event returns the event id of a calendar as stored (a deleted one with
// status "cancelled").
func (f *FakeGoogle) Event(calendarID, id string) (gcal.Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev, ok := f.calendars[calendarID][id]
	if !ok {
		return gcal.Event{}, false
	}
	return *ev, true
}

// Calls counts the calendar calls answered, by "METHOD kind" (e.g.
// "POST insert").
func (f *FakeGoogle) Calls(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

// Handler serves the token endpoint and the calendar API.
func (f *FakeGoogle) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	const events = "/calendar/v3/calendars/{cal}/events"
	mux.HandleFunc("POST "+events, f.authed("insert", f.insert))
	mux.HandleFunc("GET "+events, f.authed("list", f.list))
	mux.HandleFunc("GET "+events+"/{id}", f.authed("get", f.get))
	mux.HandleFunc("PUT "+events+"/{id}", f.authed("update", f.update))
	mux.HandleFunc("DELETE "+events+"/{id}", f.authed("delete", f.delete))
	mux.HandleFunc("POST "+events+"/watch", f.authed("watch", f.watch))
	mux.HandleFunc("POST /calendar/v3/channels/stop", f.stop)
	return mux
}

func (f *FakeGoogle) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case id != f.ClientID || secret != f.ClientSecret:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "The OAuth client was not found.")
	case r.PostFormValue("grant_type") != "refresh_token":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+r.PostFormValue("grant_type"))
	case !f.refresh[r.PostFormValue("refresh_token")]:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
	default:
		tok := "ya29." + randomHex(20)
		f.access[tok] = f.now().Add(time.Hour)
		writeGoogleJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer",
			"scope": "https://www.googleapis.com/auth/calendar.events"})
	}
}

// authed checks the access token, the calendar and any rate limit, then
// runs h under the lock with the calendar's events.
func (f *FakeGoogle) authed(kind string, h func(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.authorized(w, r) {
			return
		}
		events, ok := f.calendars[r.PathValue("cal")]
		if !ok {
			writeGoogleError(w, http.StatusNotFound, "notFound", "Not Found")
			return
		}
		f.calls[r.Method+" "+kind]++
		version := f.version
		h(w, r, events)
		if f.version != version { // a change, not a refusal
			f.changed(r.PathValue("cal"))
		}
	}
}

// authorized checks the access token and any rate limit (under f.mu).
func (f *FakeGoogle) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if exp, ok := f.access[tok]; !ok || !exp.After(f.now()) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		writeGoogleError(w, http.StatusUnauthorized, "authError", "Invalid Credentials")
		return false
	}
	if len(f.limited) > 0 {
		status := f.limited[0]
		f.limited = f.limited[1:]
		w.Header().Set("Retry-After", "1")
		writeGoogleError(w, status, "rateLimitExceeded", "Rate Limit Exceeded")
		return false
	}
	return true
}

// validID is Google's rule for client-chosen event IDs.
var validID = regexp.MustCompile(`^[a-v0-9]+$`)

func (f *FakeGoogle) insert(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event) {
	var ev gcal.Event
	if !readGoogleEvent(w, r, &ev) {
		return
	}
	if ev.Id == "" {
		ev.Id = randomHex(13)
	}
	if len(ev.Id) < 5 || len(ev.Id) > 1024 || !validID.MatchString(ev.Id) {
		writeGoogleError(w, http.StatusBadRequest, "invalid", "Invalid resource id value.")
		return
	}
	if _, exists := events[ev.Id]; exists {
		writeGoogleError(w, http.StatusConflict, "duplicate", "The requested identifier already exists.")
		return
	}
	ev.Status = "confirmed"
	f.stamp(&ev)
	events[ev.Id] = &ev
	writeGoogleJSON(w, http.StatusOK, &ev)
}

func (f *FakeGoogle) get(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event) {
	ev, ok := events[r.PathValue("id")]
	if !ok {
		writeGoogleError(w, http.StatusNotFound, "notFound", "Not Found")
		return
	}
	writeGoogleJSON(w, http.StatusOK, ev)
}

func (f *FakeGoogle) update(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event) {
	cur, ok := events[r.PathValue("id")]
	if !ok {
		writeGoogleError(w, http.StatusNotFound, "notFound", "Not Found")
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != cur.Etag {
		writeGoogleError(w, http.StatusPreconditionFailed, "conditionNotMet", "Precondition Failed")
		return
	}
	var ev gcal.Event
	if !readGoogleEvent(w, r, &ev) {
		return
	}
	ev.Id = cur.Id
	if ev.Status == "" {
		ev.Status = "confirmed" // an update of a deleted event revives it
	}
	f.stamp(&ev)
	events[ev.Id] = &ev
	writeGoogleJSON(w, http.StatusOK, &ev)
}

func (f *FakeGoogle) delete(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event) {
	cur, ok := events[r.PathValue("id")]
	switch {
	case !ok:
		writeGoogleError(w, http.StatusNotFound, "notFound", "Not Found")
	case cur.Status == "cancelled":
		writeGoogleError(w, http.StatusGone, "deleted", "Resource has been deleted")
	case r.Header.Get("If-Match") != "" && r.Header.Get("If-Match") != cur.Etag:
		writeGoogleError(w, http.StatusPreconditionFailed, "conditionNotMet", "Precondition Failed")
	default:
		cur.Status = "cancelled"
		f.stamp(cur)
		w.WriteHeader(http.StatusNoContent)
	}
}

// stamp gives ev a new version: its ETag and updated time.
func (f *FakeGoogle) stamp(ev *gcal.Event) {
	f.version++
	ev.Etag = `"` + strconv.FormatInt(3181161784712000+f.version, 10) + `"`
	ev.Updated = f.now().UTC().Format(time.RFC3339Nano)
	if ev.Created == "" {
		ev.Created = ev.Updated
	}
}

// readGoogleEvent reads an event body and checks what Google requires of one.
func readGoogleEvent(w http.ResponseWriter, r *http.Request, ev *gcal.Event) bool {
	if err := json.NewDecoder(r.Body).Decode(ev); err != nil {
		writeGoogleError(w, http.StatusBadRequest, "parseError", "Parse Error")
		return false
	}
	if ev.Start == nil || (ev.Start.DateTime == "" && ev.Start.Date == "") {
		writeGoogleError(w, http.StatusBadRequest, "required", "Missing start time.")
		return false
	}
	if ev.End == nil || (ev.End.DateTime == "" && ev.End.Date == "") {
		writeGoogleError(w, http.StatusBadRequest, "required", "Missing end time.")
		return false
	}
	return true
}

// writeGoogleError writes Google's JSON error body.
func writeGoogleError(w http.ResponseWriter, status int, reason, message string) {
	writeGoogleJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": message,
		"errors": []map[string]string{{"domain": "global", "reason": reason, "message": message}},
	}})
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	writeGoogleJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func writeGoogleJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
