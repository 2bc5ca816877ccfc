package intent

import (
	"context"
	"time"
)

// Kind is what the customer wants to do with a message.
type Kind string

// Kinds of messages.
const (
	// KindBook asks for a new appointment.
	KindBook Kind = "book"
	// KindConfirm accepts an offered slot ("ja passt", "ja, der
	// Dienstag-Termin passt", "okay, nehme ich", "Nimm Dienstag um zwei").
	KindConfirm Kind = "confirm"
	// KindCancel cancels an appointment ("stornieren", "absagen", "cancel").
	KindCancel Kind = "cancel"
	// KindReschedule moves an existing appointment to the slot in Start
	// ("verschieben auf Donnerstag 10 Uhr"); without both date and time,
	// Start is zero and Question asks for the new slot.
	KindReschedule Kind = "reschedule"
	// KindUnclear is anything else, including plain refusals; Question
	// says what to ask.
	KindUnclear Kind = "unclear"
)

// Result is what an Extractor understood of one message.
type Result struct {
	Kind Kind
	// Service is the catalogue ID, "" if none (or more than one) was named.
	Service string
	// Resource is a catalogue resource the customer named, "" if none.
	Resource string
	// Start is zero unless both date and time were resolved; else it is in
	// the given location, to the minute.
	Start time.Time
	// HasDate and HasTime say which halves of Start were resolved without
	// ambiguity.
	HasDate, HasTime bool
	// Day is the start of the resolved day in the location (valid when
	// HasDate), so a conversation can merge "Dienstag" now with "um 14 Uhr"
	// in the next message.
	Day time.Time
	// Hour and Minute are the resolved wall clock (valid when HasTime).
	Hour, Minute int
	// Question is a clarifying question in the message's language when
	// something is missing or ambiguous; the extractor never guesses.
	Question string
	// Lang is "de" or "en"; German is the default.
	Lang string
}

// Extractor turns text into a Result relative to a reference time and
// location; "morgen" and "Dienstag" mean nothing without them.
type Extractor interface {
	Extract(ctx context.Context, text string, now time.Time, loc *time.Location, cat Catalogue) (Result, error)
}

// Rules is the deterministic German and English extractor. It needs no
// model, so the same text at the same reference time always gives the same
// Result, which is what makes retries merge.
type Rules struct{}

var _ Extractor = Rules{}

// setStart sets Start to day at the result's wall clock in loc. If that
// wall clock does not exist that day (daylight saving) it clears HasTime
// instead and reports false.
func (r *Result) setStart(day civil, loc *time.Location) bool {
	start := day.at(r.Hour, r.Minute, loc)
	if start.Hour() != r.Hour || start.Minute() != r.Minute {
		r.HasTime = false
		return false
	}
	r.Start = start
	return true
}
