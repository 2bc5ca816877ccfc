package twilio

import (
	"slices"
	"strings"
)

// Twilio's default opt-out handling for SMS: a recipient who texts one of
// the opt-out keywords to a number gets nothing more from that number,
// every send meanwhile refused with 400 and error 21610, until they text
// an opt-in keyword. Twilio matches the whole message, trimmed and in any
// case. WhatsApp has no keywords at Twilio (the customer blocks the
// business in the app), so a WhatsApp send is not affected.

// The default keywords of Twilio's opt-out handling.
var (
	OptOutKeywords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"}
	OptInKeywords  = []string{"START", "YES", "UNSTOP"}
)

// ErrCodeUnsubscribed is Twilio's error for a send to a recipient who
// opted out of the sender's messages.
const ErrCodeUnsubscribed = 21610

// Inbound tells the fake that from texted body to to, as a customer's
// message that Twilio relays to the gateway: on WhatsApp it opens the
// customer service window (fake_window.go); on SMS an opt-out or opt-in
// keyword changes what the fake accepts from to to from, as Twilio's
// would.
func (f *FakeServer) Inbound(from, to, body string) {
	fromChan, fromNum := splitAddress(from)
	_, toNum := splitAddress(to)
	f.mu.Lock()
	defer f.mu.Unlock()
	if fromChan == "whatsapp" {
		f.opened(toNum, fromNum, f.now())
	}
	if fromChan != "" { // not SMS
		return
	}
	word := strings.ToUpper(strings.TrimSpace(body))
	if f.optedOut == nil {
		f.optedOut = map[string]bool{}
	}
	switch {
	case slices.Contains(OptOutKeywords, word):
		f.optedOut[toNum+"|"+fromNum] = true
	case slices.Contains(OptInKeywords, word):
		delete(f.optedOut, toNum+"|"+fromNum)
	}
}

// unsubscribed reports whether an SMS from sender to recipient is refused.
func (f *FakeServer) unsubscribed(from, to string) bool {
	fromChan, fromNum := splitAddress(from)
	_, toNum := splitAddress(to)
	if fromChan != "" {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.optedOut[fromNum+"|"+toNum]
}
