package twilio

import (
	"net/url"
	"slices"
	"strings"
)

// Twilio's default opt-out handling for SMS on long codes: a customer who
// texts only one of these words (trimmed, any case) to a number is opted
// out of, or back into, that number's SMS, and Twilio itself answers
// with the confirmation carriers require. Every later send from the
// number to them is refused with ErrCodeUnsubscribed until they opt back
// in. WhatsApp has no keywords at Twilio (the customer blocks the
// business in the app).
var (
	OptOutKeywords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
	OptInKeywords  = []string{"START", "YES", "UNSTOP"}
	HelpKeywords   = []string{"HELP", "INFO"}
)

// ErrCodeUnsubscribed is Twilio's error for a send to a recipient who
// opted out of the sender's messages.
const ErrCodeUnsubscribed = 21610

// The kinds of keyword Twilio handles, as its webhook's OptOutType names
// them.
const (
	OptOutStop  = "STOP"
	OptOutStart = "START"
	OptOutHelp  = "HELP"
)

// Keyword is the kind of opt-out keyword body is at Twilio (OptOutStop,
// OptOutStart, OptOutHelp), or "" for any other text.
func Keyword(body string) string {
	word := strings.ToUpper(strings.TrimSpace(body))
	switch {
	case slices.Contains(OptOutKeywords, word):
		return OptOutStop
	case slices.Contains(OptInKeywords, word):
		return OptOutStart
	case slices.Contains(HelpKeywords, word):
		return OptOutHelp
	}
	return ""
}

// HandledKeyword is the keyword Twilio already acted on and answered for
// an inbound SMS webhook: the OptOutType Twilio sends with it (a Messaging
// Service's Advanced Opt-Out, with the shop's own words), else the
// default keywords matched in its Body. "" for a WhatsApp message, which
// Twilio never treats so.
func HandledKeyword(form url.Values) string {
	if strings.HasPrefix(form.Get("From"), "whatsapp:") {
		return ""
	}
	if t := strings.ToUpper(form.Get("OptOutType")); t == OptOutStop || t == OptOutStart || t == OptOutHelp {
		return t
	}
	return Keyword(form.Get("Body"))
}
