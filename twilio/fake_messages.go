package twilio

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// create serves a Messages create: it validates the form as Twilio does,
// records the message and answers with it as queued.
func (f *FakeServer) create(w http.ResponseWriter, r *http.Request) {
	drop, ok := f.admit(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		writeTwilioError(w, http.StatusBadRequest, 20001, "Invalid request body")
		return
	}
	if code, msg := validateCreate(r.PostForm); code != 0 {
		writeTwilioError(w, http.StatusBadRequest, code, msg)
		return
	}
	if f.unsubscribed(r.PostForm.Get("From"), r.PostForm.Get("To")) {
		writeTwilioError(w, http.StatusBadRequest, ErrCodeUnsubscribed, "Attempt to send to unsubscribed recipient")
		return
	}
	out := FakeMessage{To: r.PostForm.Get("To"), From: r.PostForm.Get("From"), Body: r.PostForm.Get("Body"),
		StatusCallback: r.PostForm.Get("StatusCallback"), ContentSid: r.PostForm.Get("ContentSid")}
	if out.ContentSid != "" {
		body, code, msg := f.content(out.ContentSid, r.PostForm.Get("ContentVariables"))
		if code != 0 {
			writeTwilioError(w, http.StatusBadRequest, code, msg)
			return
		}
		out.Body = body
	}
	m := f.record(out)
	defer f.report(m)

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

// validateCreate checks a create form in the order Twilio reports its
// faults; it returns the Twilio error code and message of the first one
// (all answered with 400), or code 0 if the form is acceptable.
func validateCreate(form url.Values) (code int, message string) {
	to, from, body, cb := form.Get("To"), form.Get("From"), form.Get("Body"), form.Get("StatusCallback")
	switch {
	case to == "":
		return 21604, "A 'To' phone number is required."
	case from == "" && form.Get("MessagingServiceSid") == "":
		return 21603, "A 'From' phone number is required."
	case body == "" && form.Get("MediaUrl") == "" && form.Get("ContentSid") == "":
		return 21602, "Message body is required."
	case utf8.RuneCountInString(body) > 1600:
		return 21617, "The concatenated message body exceeds the 1600 character limit."
	}
	toChan, toNum := splitAddress(to)
	fromChan, fromNum := splitAddress(from)
	if !e164.MatchString(toNum) {
		return 21211, fmt.Sprintf("Invalid 'To' Phone Number: %s", to)
	}
	if from != "" && !e164.MatchString(fromNum) {
		return 21212, fmt.Sprintf("Invalid From Number (caller ID): %s", from)
	}
	if from != "" && toChan != fromChan {
		return 21910, "Invalid From and To pair. From and To should be of the same channel"
	}
	if cb != "" {
		if u, err := url.Parse(cb); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return 21609, "Invalid StatusCallback URL: " + cb
		}
	}
	return 0, ""
}

// record stores an accepted message as sent (the fake hands it to the
// carrier at once), as undelivered with 63003 when it goes to WhatsApp
// at a number without WhatsApp, or as failed with 63016 when it is
// free-form WhatsApp text outside the customer service window, and
// returns it.
func (f *FakeServer) record(m FakeMessage) FakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now().UTC().Truncate(time.Second)
	m.Sid, m.AccountSid, m.Status, m.DateCreated, m.DateSent = "SM"+randomHex(16), f.AccountSID, "sent", now, now
	switch {
	case f.unreachable(m.To):
		m.Status, m.ErrorCode, m.DateSent = "undelivered", ErrCodeNotOnWhatsApp, time.Time{}
	case m.ContentSid == "" && f.outsideWindow(m.From, m.To, f.now()):
		m.Status, m.ErrorCode, m.DateSent = "failed", ErrCodeOutsideWindow, time.Time{}
	}
	f.msgs = append(f.msgs, m)
	return m
}

// fetch serves one message by SID ("{sid}.json").
func (f *FakeServer) fetch(w http.ResponseWriter, r *http.Request) {
	drop, ok := f.admit(w, r)
	if !ok {
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

// splitAddress splits a channel address ("whatsapp:+49…") into channel
// ("" for a plain phone number) and number.
func splitAddress(a string) (channel, number string) {
	if c, n, ok := strings.Cut(a, ":"); ok {
		return c, n
	}
	return "", a
}
