package twilio

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// FakeMessage is a message the fake accepted, as Twilio stores it.
type FakeMessage struct {
	Sid            string
	AccountSid     string
	To             string
	From           string
	Body           string
	StatusCallback string
	// Status is "sent": the fake hands a message to the carrier as soon
	// as it has answered the create request with "queued".
	Status      string
	DateCreated time.Time
	DateSent    time.Time
}

// FakeServer is a fake of Twilio's Programmable Messaging REST API
// (2010-04-01 Messages resource) on a loopback httptest.Server. It speaks
// the wire protocol the real API speaks (form-encoded create, basic auth,
// Twilio's JSON message, list and error shapes, page URIs), so the
// production Client and the twilio-go library run unchanged against it.
//
// Faults are injected per request: FailNext answers the next request with
// a Twilio error and commits nothing; DropNextResponse lets the next
// request take effect (a create is recorded) and then closes the
// connection without an answer: the lost response a timeout produces.
type FakeServer struct {
	AccountSID string
	AuthToken  string

	srv *httptest.Server

	mu     sync.Mutex
	msgs   []FakeMessage
	faults []fakeFault
	now    func() time.Time
}

type fakeFault struct {
	drop    bool
	status  int
	code    int
	message string
}

// NewFakeServer starts a fake with a fresh account SID and auth token.
// Close it when done.
func NewFakeServer() *FakeServer {
	f := &FakeServer{
		AccountSID: "AC" + randomHex(16),
		AuthToken:  randomHex(16),
		now:        time.Now,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2010-04-01/Accounts/{account}/Messages.json", f.create)
	mux.HandleFunc("GET /2010-04-01/Accounts/{account}/Messages.json", f.list)
	mux.HandleFunc("GET /2010-04-01/Accounts/{account}/Messages/{file}", f.fetch)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeTwilioError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
	})
	f.srv = httptest.NewServer(mux)
	return f
}

// URL is the fake's base URL (http://127.0.0.1:port), to be used in place
// of https://api.twilio.com.
func (f *FakeServer) URL() string { return f.srv.URL }

// Close stops the server.
func (f *FakeServer) Close() { f.srv.Close() }

// SetNow sets the fake's clock (date_created, date_sent).
func (f *FakeServer) SetNow(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// Messages returns every message the fake accepted, oldest first.
func (f *FakeServer) Messages() []FakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeMessage(nil), f.msgs...)
}

// DropNextResponse makes the next request take effect (a create is
// recorded) and then closes the connection without answering.
func (f *FakeServer) DropNextResponse() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fakeFault{drop: true})
}

// FailNext answers the next request with status and the Twilio error code
// that usually comes with it; nothing is recorded.
func (f *FakeServer) FailNext(status int) {
	code, msg := defaultFault(status)
	f.FailNextWith(status, code, msg)
}

// FailNextWith answers the next request with status, a Twilio error code
// and message; nothing is recorded.
func (f *FakeServer) FailNextWith(status, code int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fakeFault{status: status, code: code, message: message})
}

func defaultFault(status int) (int, string) {
	switch status {
	case http.StatusBadRequest:
		return 21211, "Invalid 'To' Phone Number"
	case http.StatusUnauthorized:
		return 20003, "Authenticate"
	case http.StatusNotFound:
		return 20404, "The requested resource was not found"
	case http.StatusTooManyRequests:
		return 20429, "Too Many Requests"
	case http.StatusServiceUnavailable:
		return 20503, "Service Unavailable"
	default:
		return 20500, "Internal Server Error"
	}
}

// nextFault pops the next injected fault, if any.
func (f *FakeServer) nextFault() (fakeFault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.faults) == 0 {
		return fakeFault{}, false
	}
	ft := f.faults[0]
	f.faults = f.faults[1:]
	return ft, true
}

// authorize checks basic auth and the account in the path as Twilio does;
// it answers and returns false on failure.
func (f *FakeServer) authorize(w http.ResponseWriter, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok || user != f.AccountSID || pass != f.AuthToken {
		w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
		writeTwilioErrorDetail(w, http.StatusUnauthorized, 20003, "Authenticate", "Your AccountSid or AuthToken was incorrect.")
		return false
	}
	if r.PathValue("account") != f.AccountSID {
		writeTwilioError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return false
	}
	return true
}

// fault applies an injected failure before the request takes effect; it
// returns the drop flag for faults that act after it.
func (f *FakeServer) fault(w http.ResponseWriter) (handled, drop bool) {
	ft, ok := f.nextFault()
	if !ok {
		return false, false
	}
	if ft.drop {
		return false, true
	}
	writeTwilioError(w, ft.status, ft.code, ft.message)
	return true, false
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func (f *FakeServer) create(w http.ResponseWriter, r *http.Request) {
	if !f.authorize(w, r) {
		return
	}
	handled, drop := f.fault(w)
	if handled {
		return
	}
	if err := r.ParseForm(); err != nil {
		writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid request body")
		return
	}
	to, from, body, cb := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body"), r.PostForm.Get("StatusCallback")
	switch {
	case to == "":
		writeTwilioError(w, http.StatusBadRequest, 21604, "A 'To' phone number is required.")
		return
	case from == "" && r.PostForm.Get("MessagingServiceSid") == "":
		writeTwilioError(w, http.StatusBadRequest, 21603, "A 'From' phone number is required.")
		return
	case body == "" && r.PostForm.Get("MediaUrl") == "" && r.PostForm.Get("ContentSid") == "":
		writeTwilioError(w, http.StatusBadRequest, 21602, "Message body is required.")
		return
	case utf8.RuneCountInString(body) > 1600:
		writeTwilioError(w, http.StatusBadRequest, 21617, "The concatenated message body exceeds the 1600 character limit.")
		return
	}
	toChan, toNum := splitAddress(to)
	fromChan, fromNum := splitAddress(from)
	if !e164.MatchString(toNum) {
		writeTwilioError(w, http.StatusBadRequest, 21211, fmt.Sprintf("Invalid 'To' Phone Number: %s", to))
		return
	}
	if from != "" && !e164.MatchString(fromNum) {
		writeTwilioError(w, http.StatusBadRequest, 21212, fmt.Sprintf("Invalid From Number (caller ID): %s", from))
		return
	}
	if from != "" && toChan != fromChan {
		writeTwilioError(w, http.StatusBadRequest, 21910, "Invalid From and To pair. From and To should be of the same channel")
		return
	}
	if cb != "" {
		if u, err := url.Parse(cb); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			writeTwilioError(w, http.StatusBadRequest, 21609, "Invalid StatusCallback URL: "+cb)
			return
		}
	}

	f.mu.Lock()
	now := f.now().UTC().Truncate(time.Second)
	m := FakeMessage{
		Sid: "SM" + randomHex(16), AccountSid: f.AccountSID, To: to, From: from, Body: body,
		StatusCallback: cb, Status: "sent", DateCreated: now, DateSent: now,
	}
	f.msgs = append(f.msgs, m)
	f.mu.Unlock()

	if drop {
		dropConnection(w)
		return
	}
	// The create answer shows the message as Twilio first stores it:
	// queued, not yet sent.
	queued := m
	queued.Status, queued.DateSent = "queued", time.Time{}
	writeJSON(w, http.StatusCreated, wireMessageOf(queued))
}

func (f *FakeServer) fetch(w http.ResponseWriter, r *http.Request) {
	if !f.authorize(w, r) {
		return
	}
	handled, drop := f.fault(w)
	if handled {
		return
	}
	if drop {
		dropConnection(w)
		return
	}
	sid, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	if ok {
		f.mu.Lock()
		for _, m := range f.msgs {
			if m.Sid == sid {
				f.mu.Unlock()
				writeJSON(w, http.StatusOK, wireMessageOf(m))
				return
			}
		}
		f.mu.Unlock()
	}
	writeTwilioError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
}

// list serves the Messages list: filters To, From, DateSent, DateSent<
// and DateSent> (Twilio's "DateSent<=" and "DateSent>=" on the wire),
// newest first, paged by PageSize with Page and PageToken.
func (f *FakeServer) list(w http.ResponseWriter, r *http.Request) {
	if !f.authorize(w, r) {
		return
	}
	handled, drop := f.fault(w)
	if handled {
		return
	}
	if drop {
		dropConnection(w)
		return
	}
	q := r.URL.Query()
	type dateFilter struct {
		key string
		cmp func(day, bound string) bool
	}
	filters := []dateFilter{
		{"DateSent", func(d, b string) bool { return d == b }},
		{"DateSent<", func(d, b string) bool { return d <= b }},
		{"DateSent>", func(d, b string) bool { return d >= b }},
	}
	bounds := map[string]string{}
	for _, df := range filters {
		if v := q.Get(df.key); v != "" {
			day, err := twilioDate(v)
			if err != nil {
				writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid "+df.key+" filter: "+v)
				return
			}
			bounds[df.key] = day
		}
	}
	pageSize := 50
	if v := q.Get("PageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid PageSize: "+v)
			return
		}
		pageSize = min(n, 1000)
	}
	page := 0
	if v := q.Get("Page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid Page: "+v)
			return
		}
		page = n
	}

	f.mu.Lock()
	var matched []FakeMessage
	for i := len(f.msgs) - 1; i >= 0; i-- { // newest first
		m := f.msgs[i]
		if v := q.Get("To"); v != "" && m.To != v {
			continue
		}
		if v := q.Get("From"); v != "" && m.From != v {
			continue
		}
		keep := true
		for _, df := range filters {
			if b, ok := bounds[df.key]; ok {
				// Twilio filters by the GMT date a message was sent; one
				// not sent yet has no date_sent and matches no filter.
				if m.DateSent.IsZero() || !df.cmp(m.DateSent.UTC().Format(time.DateOnly), b) {
					keep = false
				}
			}
		}
		if keep {
			matched = append(matched, m)
		}
	}
	f.mu.Unlock()
	sort.SliceStable(matched, func(i, j int) bool { return matched[i].DateCreated.After(matched[j].DateCreated) })

	start := page * pageSize
	if tok := q.Get("PageToken"); tok != "" {
		// PA<sid>: the page after that message; PB<sid>: the page before.
		dir, sid := tok[:min(2, len(tok))], tok[min(2, len(tok)):]
		idx := -1
		for i, m := range matched {
			if m.Sid == sid {
				idx = i
				break
			}
		}
		switch {
		case dir == "PA" && idx >= 0:
			start = idx + 1
		case dir == "PB" && idx >= 0:
			start = max(idx-pageSize, 0)
		case dir == "PA" || dir == "PB":
			start = len(matched)
		default:
			writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid PageToken: "+tok)
			return
		}
	}
	start = min(start, len(matched))
	end := min(start+pageSize, len(matched))
	items := matched[start:end]

	base := url.Values{}
	for _, k := range []string{"To", "From", "DateSent", "DateSent<", "DateSent>"} {
		if v := q.Get(k); v != "" {
			base.Set(k, v)
		}
	}
	pageURI := func(p int, token string) string {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		v.Set("PageSize", strconv.Itoa(pageSize))
		v.Set("Page", strconv.Itoa(p))
		if token != "" {
			v.Set("PageToken", token)
		}
		return r.URL.Path + "?" + v.Encode()
	}
	resp := wireList{
		FirstPageURI: pageURI(0, ""),
		URI:          pageURI(page, q.Get("PageToken")),
		Page:         page,
		PageSize:     pageSize,
		Start:        start,
		End:          max(start+len(items)-1, start),
		Messages:     make([]wireMessage, 0, len(items)),
	}
	for _, m := range items {
		resp.Messages = append(resp.Messages, wireMessageOf(m))
	}
	if end < len(matched) && len(items) > 0 {
		next := pageURI(page+1, "PA"+items[len(items)-1].Sid)
		resp.NextPageURI = &next
	}
	if page > 0 && len(items) > 0 {
		prev := pageURI(page-1, "PB"+items[0].Sid)
		resp.PreviousPageURI = &prev
	}
	writeJSON(w, http.StatusOK, resp)
}

// twilioDate reads a date filter value: YYYY-MM-DD as documented, or a
// full RFC 3339 time as twilio-go sends it; Twilio compares dates (GMT),
// so the time of day does not narrow the result.
func twilioDate(v string) (string, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.Format(time.DateOnly), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return "", err
	}
	return t.UTC().Format(time.DateOnly), nil
}

// splitAddress splits a channel address ("whatsapp:+49…") into channel
// ("" for a plain phone number) and number.
func splitAddress(a string) (channel, number string) {
	if c, n, ok := strings.Cut(a, ":"); ok {
		return c, n
	}
	return "", a
}

type wireMessage struct {
	AccountSid          string            `json:"account_sid"`
	APIVersion          string            `json:"api_version"`
	Body                string            `json:"body"`
	DateCreated         string            `json:"date_created"`
	DateSent            *string           `json:"date_sent"`
	DateUpdated         string            `json:"date_updated"`
	Direction           string            `json:"direction"`
	ErrorCode           *int              `json:"error_code"`
	ErrorMessage        *string           `json:"error_message"`
	From                string            `json:"from"`
	MessagingServiceSid *string           `json:"messaging_service_sid"`
	NumMedia            string            `json:"num_media"`
	NumSegments         string            `json:"num_segments"`
	Price               *string           `json:"price"`
	PriceUnit           string            `json:"price_unit"`
	Sid                 string            `json:"sid"`
	Status              string            `json:"status"`
	SubresourceURIs     map[string]string `json:"subresource_uris"`
	To                  string            `json:"to"`
	URI                 string            `json:"uri"`
}

type wireList struct {
	End             int           `json:"end"`
	FirstPageURI    string        `json:"first_page_uri"`
	Messages        []wireMessage `json:"messages"`
	NextPageURI     *string       `json:"next_page_uri"`
	Page            int           `json:"page"`
	PageSize        int           `json:"page_size"`
	PreviousPageURI *string       `json:"previous_page_uri"`
	Start           int           `json:"start"`
	URI             string        `json:"uri"`
}

func wireMessageOf(m FakeMessage) wireMessage {
	uri := "/2010-04-01/Accounts/" + m.AccountSid + "/Messages/" + m.Sid
	w := wireMessage{
		AccountSid:  m.AccountSid,
		APIVersion:  "2010-04-01",
		Body:        m.Body,
		DateCreated: m.DateCreated.UTC().Format(time.RFC1123Z),
		DateUpdated: m.DateCreated.UTC().Format(time.RFC1123Z),
		Direction:   "outbound-api",
		From:        m.From,
		NumMedia:    "0",
		NumSegments: strconv.Itoa(segments(m.Body)),
		PriceUnit:   "USD",
		Sid:         m.Sid,
		Status:      m.Status,
		SubresourceURIs: map[string]string{
			"media":    uri + "/Media.json",
			"feedback": uri + "/Feedback.json",
		},
		To:  m.To,
		URI: uri + ".json",
	}
	if !m.DateSent.IsZero() {
		s := m.DateSent.UTC().Format(time.RFC1123Z)
		w.DateSent, w.DateUpdated = &s, s
	}
	return w
}

// segments approximates Twilio's SMS segment count (GSM-7 limits).
func segments(body string) int {
	n := utf8.RuneCountInString(body)
	if n <= 160 {
		return 1
	}
	return (n + 152) / 153
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeTwilioError(w http.ResponseWriter, status, code int, message string) {
	writeTwilioErrorDetail(w, status, code, message, "")
}

// writeTwilioErrorDetail writes Twilio's legacy REST error document.
func writeTwilioErrorDetail(w http.ResponseWriter, status, code int, message, detail string) {
	body := map[string]any{
		"code":      code,
		"message":   message,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
		"status":    status,
	}
	if detail != "" {
		body["detail"] = detail
	}
	writeJSON(w, status, body)
}

// dropConnection closes the connection without an HTTP answer.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection without a response
	}
	_ = conn.Close()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
