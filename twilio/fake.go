package twilio

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/bookonce/bookonce/internal/tracing"
)

// FakeMessage is a message the fake accepted, as Twilio stores it.
type FakeMessage struct {
	Sid            string
	AccountSid     string
	To             string
	From           string
	Body           string
	StatusCallback string
	// ContentSid names the content template the message was sent with
	// (Body is then the rendered template); "" for free-form text.
	ContentSid string
	// Status is "sent": the fake hands a message to the carrier as soon
	// as it has answered the create request with "queued"; "failed" with
	// ErrorCode when a rule refused it after acceptance (63016: free-form
	// WhatsApp text outside the customer service window).
	Status      string
	ErrorCode   int
	DateCreated time.Time
	DateSent    time.Time
}

// FakeServer is a fake of Twilio's Programmable Messaging REST API
// (2010-04-01 Messages resource) on a loopback httptest.Server. It speaks
// the wire protocol the real API speaks (form-encoded create, basic auth,
// Twilio's JSON message, list and error shapes, page URIs), so the
// production Client and the twilio-go library run unchanged against it.
//
// Twilio's rules it enforces: Inbound tells it what a customer texted the
// shop (Simulator.Twilio does, for every message it delivers). An SMS
// recipient who texted STOP is refused with 21610 until they text START
// (fake_optout.go); free-form WhatsApp text to a customer who has not
// written to the sender within 24 hours fails with 63016, reported by
// status callback, and only approved content templates (ApproveContent,
// sent with ContentSid) reach them; a WhatsApp message to a number
// without WhatsApp (NotOnWhatsApp) fails with 63003 (fake_window.go).
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
	// optedOut holds "sender|recipient" of SMS recipients who texted an
	// opt-out keyword (fake_optout.go).
	optedOut map[string]bool
	// received are the MessageSids of the inbound messages taken (Receive).
	received map[string]bool
	// contents are the approved content templates by SID; lastInbound is
	// when each customer last wrote to each WhatsApp sender
	// ("sender|customer", fake_window.go).
	contents    map[string]string
	lastInbound map[string]time.Time
	// noWhatsApp holds the numbers without a WhatsApp account.
	noWhatsApp map[string]bool
	// delivered, posted and callbacks: the status callbacks
	// (fake_callback.go).
	delivered bool
	posted    []FakeCallback
	callbacks sync.WaitGroup
}

type fakeFault struct {
	drop    bool
	status  int
	code    int
	message string
}

// FakeServiceName names the fake's server spans.
const FakeServiceName = "twilio-fake"

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
	// Traced like the real APIs, so `make run` shows the send in the trace.
	f.srv = httptest.NewServer(tracing.Handler(FakeServiceName, false, mux))
	return f
}

// URL is the fake's base URL (http://127.0.0.1:port), to be used in place
// of https://api.twilio.com.
func (f *FakeServer) URL() string { return f.srv.URL }

// Close stops the server.
func (f *FakeServer) Close() { f.srv.Close() }

// SetNow sets the fake's clock (date_created, date_sent, and the
// customer service window).
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

// admit authorizes r and applies an injected fault: ok is false when
// either has answered; drop asks for the answer to be dropped once the
// request has taken effect.
func (f *FakeServer) admit(w http.ResponseWriter, r *http.Request) (drop, ok bool) {
	if !f.authorize(w, r) {
		return false, false
	}
	handled, drop := f.fault(w)
	return drop, !handled
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
