package consent

import (
	"slices"
	"strings"
	"unicode"
)

// DefaultStop and DefaultStart are the keywords of a shop that configured
// none, in German and English. A keyword is the whole message, as on SMS
// (Twilio's opt-out keywords work so): "Stopp" is an opt-out, "Stopp, ich
// meine Donnerstag" is not. CANCEL and END, which Twilio's SMS list
// includes, are left out: here they are the words of a booking's cancel.
var (
	DefaultStop  = []string{"STOP", "STOPP", "ABMELDEN", "UNSUBSCRIBE"}
	DefaultStart = []string{"START", "ANMELDEN"}
)

// Match reads text as a consent keyword: OptOut for one of stop, OptIn
// for one of start (each nil: the defaults), case and surrounding
// punctuation ignored; false for any other text.
func Match(text string, stop, start []string) (Action, bool) {
	word := Normal(text)
	if word == "" {
		return "", false
	}
	if stop == nil {
		stop = DefaultStop
	}
	if start == nil {
		start = DefaultStart
	}
	if slices.Contains(stop, word) {
		return OptOut, true
	}
	if slices.Contains(start, word) {
		return OptIn, true
	}
	return "", false
}

// Normal is a keyword as Match compares it: upper case, without the
// spaces and punctuation around it ("stopp!" is STOPP).
func Normal(text string) string {
	return strings.ToUpper(strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
}
