package twilio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// WhatsApp's customer service window, as Twilio enforces it: a business
// may send a WhatsApp customer free-form text (Body) only within 24 hours
// of that customer's last message to the business's sender. Outside it
// only an approved template goes out, sent through the Content API
// (ContentSid and ContentVariables). A free-form message outside the
// window is still accepted by the create request (201, queued) and fails
// afterwards: status "failed", error 63016, told by status callback.

// ServiceWindow is how long after a customer's last inbound WhatsApp
// message the business may send them free-form text.
const ServiceWindow = 24 * time.Hour

// Twilio's error codes of the Content API and the window.
const (
	// ErrCodeOutsideWindow: a free-form WhatsApp message outside the
	// customer service window (reported by status callback).
	ErrCodeOutsideWindow = 63016
	// ErrCodeContentSid: the ContentSid is not a content template of the
	// account (answered 400 to the create request).
	ErrCodeContentSid = 21655
	// ErrCodeContentVariables: ContentVariables is not a JSON object of
	// strings, or lacks a placeholder of the template (400).
	ErrCodeContentVariables = 21656
	// ErrCodeNotOnWhatsApp: the recipient's number has no WhatsApp
	// account (a landline, a phone without the app); reported by status
	// callback ("Channel could not find To address").
	ErrCodeNotOnWhatsApp = 63003
)

// ApproveContent makes text (with Twilio's numbered placeholders, "{{1}}")
// an approved content template of the fake's account under sid
// (HX + 32 hex digits), as the Content Template Builder and WhatsApp's
// approval would. It panics on a malformed SID: a test's mistake.
func (f *FakeServer) ApproveContent(sid, text string) {
	if !ValidContentSID(sid) {
		panic(fmt.Sprintf("twilio fake: malformed content SID %q", sid))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.contents == nil {
		f.contents = map[string]string{}
	}
	f.contents[sid] = text
}

// content renders the content template sid with the JSON variables vars;
// code is Twilio's error (answered 400) when it cannot.
func (f *FakeServer) content(sid, vars string) (body string, code int, message string) {
	f.mu.Lock()
	text, known := f.contents[sid]
	f.mu.Unlock()
	if !ValidContentSID(sid) || !known {
		return "", ErrCodeContentSid, "The ContentSid is Invalid"
	}
	values := map[string]string{}
	if strings.TrimSpace(vars) != "" {
		if err := json.Unmarshal([]byte(vars), &values); err != nil {
			return "", ErrCodeContentVariables, "The ContentVariables Parameter is invalid"
		}
	}
	body, ok := RenderContent(text, values)
	if !ok {
		return "", ErrCodeContentVariables, "The ContentVariables Parameter is invalid"
	}
	return body, 0, ""
}

// windowKey names the window between a business sender and a customer
// (numbers without a channel prefix).
func windowKey(business, customer string) string { return business + "|" + customer }

// opened records an inbound WhatsApp message from customer to business at
// now: the customer service window opens again. Called with mu held.
func (f *FakeServer) opened(business, customer string, now time.Time) {
	if f.lastInbound == nil {
		f.lastInbound = map[string]time.Time{}
	}
	f.lastInbound[windowKey(business, customer)] = now
}

// NotOnWhatsApp makes number (E.164) one without a WhatsApp account:
// every WhatsApp message to it, text or template, is accepted and then
// fails with 63003, as for a landline.
func (f *FakeServer) NotOnWhatsApp(number string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noWhatsApp == nil {
		f.noWhatsApp = map[string]bool{}
	}
	f.noWhatsApp[number] = true
}

// unreachable reports whether a message to to fails because its number
// has no account on the channel. Called with mu held.
func (f *FakeServer) unreachable(to string) bool {
	ch, num := splitAddress(to)
	return ch == "whatsapp" && f.noWhatsApp[num]
}

// outsideWindow reports whether a free-form message from sender to
// recipient at now fails with 63016: WhatsApp only, and only when the
// recipient has not written to sender within ServiceWindow. Called with
// mu held.
func (f *FakeServer) outsideWindow(from, to string, now time.Time) bool {
	ch, fromNum := splitAddress(from)
	_, toNum := splitAddress(to)
	if ch != "whatsapp" {
		return false
	}
	last, ok := f.lastInbound[windowKey(fromNum, toNum)]
	return !ok || now.Sub(last) > ServiceWindow
}

// Relay passes every request to next, and first tells the fake of each
// inbound message in it (a form with MessageSid and Body, as Twilio posts
// a customer's message to a webhook), as if the fake had relayed it:
// `make run` puts it in front of the gateway, so that messages a
// developer simulates open the customer service window at the fake.
func (f *FakeServer) Relay(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			_ = r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
			if form, perr := url.ParseQuery(string(body)); err == nil && perr == nil && form.Get("MessageSid") != "" && form.Has("Body") {
				f.Receive(form)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Backdate moves the last message from customer to business ("whatsapp:"
// addresses or numbers) back by d, as if the customer had last written
// the shop that long ago: a drill plays "booked a week ago" so.
func (f *FakeServer) Backdate(customer, business string, d time.Duration) {
	_, c := splitAddress(customer)
	_, b := splitAddress(business)
	f.mu.Lock()
	defer f.mu.Unlock()
	if at, ok := f.lastInbound[windowKey(b, c)]; ok {
		f.lastInbound[windowKey(b, c)] = at.Add(-d)
	}
}
