package intent

import (
	"errors"
	"fmt"
	"time"
)

// Fields a ValidationError can name.
const (
	FieldKind    = "kind"
	FieldService = "service"
	FieldDate    = "date"
	FieldTime    = "time"
	FieldStart   = "start"
)

// ValidationError says why a Result cannot start a booking yet, and what
// to ask the customer so that it can.
type ValidationError struct {
	// Field is one of FieldKind, FieldService, FieldDate, FieldTime,
	// FieldStart.
	Field string
	// Question is a clarifying question in the result's language.
	Question string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("intent: invalid %s: %s", e.Field, e.Question)
}

// Validate checks a result against the catalogue and opening hours before
// it can start anything: a booking or confirmation, no open question,
// service known, start in the future relative to now, on an opening day,
// and the whole service finished by closing time. Failures are
// *ValidationError; a catalogue without valid opening hours or duration is
// a plain error, because no customer answer can fix it.
func Validate(r Result, now time.Time, loc *time.Location, cat Catalogue) error {
	if loc == nil {
		return errors.New("intent: nil location")
	}
	q := questions{lang: r.Lang, year: now.In(loc).Year(), cat: cat}
	if err := q.incomplete(r, loc); err != nil {
		return err
	}
	svc, _ := cat.Service(r.Service) // incomplete made sure it is offered
	opens, closes, err := cat.openingHours()
	if err != nil {
		return err
	}
	if svc.DurationMinutes <= 0 {
		return fmt.Errorf("intent: service %q of catalogue %q has no duration", svc.ID, cat.Tenant)
	}
	return q.bookable(r.Start.In(loc), now, svc, opens, closes, loc)
}

// invalid is the ValidationError that asks question about field.
func invalid(field, question string) error {
	return &ValidationError{Field: field, Question: question}
}

// incomplete is the ValidationError for a result that cannot be booked as
// it stands: not a booking or confirmation, an open question, or a
// service, date or time missing or not offered; nil for a complete one.
func (q questions) incomplete(r Result, loc *time.Location) error {
	if r.Kind != KindBook && r.Kind != KindConfirm {
		if r.Question != "" {
			return invalid(FieldKind, r.Question)
		}
		return invalid(FieldKind, q.unclear())
	}
	if r.Question != "" {
		switch {
		case r.Service == "":
			return invalid(FieldService, r.Question)
		case !r.HasDate:
			return invalid(FieldDate, r.Question)
		case !r.HasTime:
			return invalid(FieldTime, r.Question)
		}
		return invalid(FieldStart, r.Question)
	}
	var dayText, clockText string
	if r.HasDate && !r.Day.IsZero() {
		dayText = q.day(civilOf(r.Day.In(loc)))
	}
	if r.HasTime {
		clockText = q.clock(r.Hour, r.Minute)
	}
	_, ok := q.cat.Service(r.Service)
	if r.Service == "" {
		return invalid(FieldService, q.missing(true, dayText, clockText))
	}
	if !ok {
		return invalid(FieldService, q.pick("We do not offer that service.", "Diese Leistung bieten wir nicht an.")+q.offers())
	}
	if r.Start.IsZero() {
		field := FieldTime
		if dayText == "" {
			field = FieldDate
		}
		return invalid(field, q.missing(false, dayText, clockText))
	}
	return nil
}

// openingHours reads the catalogue's opening and closing times (minutes
// after midnight); a catalogue without valid hours or days is an error no
// customer answer can fix.
func (c Catalogue) openingHours() (opens, closes int, err error) {
	opens, err1 := parseClock(c.Opens)
	closes, err2 := parseClock(c.Closes)
	if err := errors.Join(err1, err2); err != nil || closes <= opens || len(c.Weekdays) == 0 {
		return 0, 0, fmt.Errorf("intent: catalogue %q has no valid opening hours (opens %q, closes %q, %d weekdays): %v", c.Tenant, c.Opens, c.Closes, len(c.Weekdays), err)
	}
	return opens, closes, nil
}

// bookable is the ValidationError for a start (in loc) the business
// cannot serve: in the past, on a closed day, outside opening hours, or
// too late for svc to finish by closing time; nil when it can.
func (q questions) bookable(start, now time.Time, svc Service, opens, closes int, loc *time.Location) error {
	if !start.After(now) {
		return invalid(FieldStart, q.pick("That time has already passed. Which later time works for you?",
			"Dieser Zeitpunkt liegt in der Vergangenheit. Welcher spätere Termin passt Ihnen?"))
	}
	hours := q.hours(opens, closes)
	if !openOn(q.cat.Weekdays, start.Weekday()) {
		if q.en() {
			return invalid(FieldStart, fmt.Sprintf("We are closed on %s; we are open %s. Which day works for you?", start.Weekday(), hours))
		}
		return invalid(FieldStart, fmt.Sprintf("Am %s haben wir geschlossen; wir sind %s für Sie da. Welcher Tag passt Ihnen?", germanWeekdays[start.Weekday()], hours))
	}
	day := civilOf(start)
	open := day.at(opens/60, opens%60, loc)
	closing := day.at(closes/60, closes%60, loc)
	if start.Before(open) || !start.Before(closing) {
		if q.en() {
			return invalid(FieldStart, fmt.Sprintf("At %s we are closed; we are open %s. What time works for you?", q.clock(start.Hour(), start.Minute()), hours))
		}
		return invalid(FieldStart, fmt.Sprintf("Um %s haben wir geschlossen; wir sind %s für Sie da. Welche Uhrzeit passt Ihnen?", q.clock(start.Hour(), start.Minute()), hours))
	}
	duration := time.Duration(svc.DurationMinutes) * time.Minute
	if start.Add(duration).After(closing) {
		latest := closing.Add(-duration)
		if q.en() {
			return invalid(FieldStart, fmt.Sprintf("A %s takes %d minutes and must be finished by %s, so the latest start is %s. What earlier time works for you?",
				svc.Label("en"), svc.DurationMinutes, q.clock(closing.Hour(), closing.Minute()), q.clock(latest.Hour(), latest.Minute())))
		}
		return invalid(FieldStart, fmt.Sprintf("%s dauert %d Minuten und muss bis %s fertig sein, der späteste Beginn ist %s. Welche frühere Uhrzeit passt Ihnen?",
			svc.Label("de"), svc.DurationMinutes, q.clock(closing.Hour(), closing.Minute()), q.clock(latest.Hour(), latest.Minute())))
	}
	return nil
}

// parseClock reads "HH:MM" as minutes after midnight.
func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, err
	}
	return t.Hour()*60 + t.Minute(), nil
}

func openOn(days []time.Weekday, wd time.Weekday) bool {
	for _, d := range days {
		if d == wd {
			return true
		}
	}
	return false
}

// hours formats opening hours, "Montag bis Samstag von 08:00 bis 18:00 Uhr"
// / "Monday to Saturday from 8:00 am to 6:00 pm", for the validation
// questions. Only catalogues whose days form one run say "bis"; others list
// the days.
func (q questions) hours(opens, closes int) string {
	days := q.cat.Weekdays
	var span string
	if len(days) > 0 && consecutive(days) {
		span = q.weekday(days[0])
		if len(days) > 1 {
			span += q.pick(" to ", " bis ") + q.weekday(days[len(days)-1])
		}
	} else {
		for i, d := range days {
			if i > 0 {
				span += ", "
			}
			span += q.weekday(d)
		}
	}
	if q.en() {
		return span + " from " + q.clock(opens/60, opens%60) + " to " + q.clock(closes/60, closes%60)
	}
	return span + fmt.Sprintf(" von %02d:%02d bis %s", opens/60, opens%60, q.clock(closes/60, closes%60))
}

func consecutive(days []time.Weekday) bool {
	for i := 1; i < len(days); i++ {
		if days[i] != (days[i-1]+1)%7 {
			return false
		}
	}
	return true
}
