package twilio

import (
	"net/url"
	"time"
)

// Receive is Inbound for the form of an inbound message webhook: a
// message Twilio redelivers to the gateway (the same MessageSid) was
// received once, so it is taken once, and Twilio answers a keyword once.
func (f *FakeServer) Receive(form url.Values) {
	if sid := form.Get("MessageSid"); sid != "" {
		f.mu.Lock()
		seen := f.received[sid]
		if f.received == nil {
			f.received = map[string]bool{}
		}
		f.received[sid] = true
		f.mu.Unlock()
		if seen {
			return
		}
	}
	f.Inbound(form.Get("From"), form.Get("To"), form.Get("Body"))
}

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
	if f.optedOut == nil {
		f.optedOut = map[string]bool{}
	}
	kind := Keyword(body)
	switch kind {
	case OptOutStop:
		f.optedOut[toNum+"|"+fromNum] = true
	case OptOutStart:
		delete(f.optedOut, toNum+"|"+fromNum)
	}
	if reply, ok := keywordReplies[kind]; ok {
		now := f.now().UTC().Truncate(time.Second)
		f.msgs = append(f.msgs, FakeMessage{Sid: "SM" + randomHex(16), AccountSid: f.AccountSID, To: fromNum, From: toNum,
			Body: reply, Status: "delivered", DateCreated: now, DateSent: now})
	}
}

// keywordReplies are the confirmations Twilio itself sends to a keyword,
// as carriers require: the shop's own answer to an opt-out would be
// refused (ErrCodeUnsubscribed).
var keywordReplies = map[string]string{
	OptOutStop:  "You have successfully been unsubscribed. You will not receive any more messages from this number. Reply START to resubscribe.",
	OptOutStart: "You have successfully been re-subscribed to messages from this number. Reply HELP for help. Reply STOP to unsubscribe. Msg&Data Rates May Apply.",
	OptOutHelp:  "Reply STOP to unsubscribe. Msg&Data Rates May Apply.",
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
