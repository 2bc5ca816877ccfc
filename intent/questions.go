package intent

import (
	"fmt"
	"strings"
	"time"
)

// questions phrases clarifying questions in the customer's language. They
// always name what is already understood, so a caller on the phone hears
// what the system took from the speech-to-text.
type questions struct {
	lang string
	year int // the current year is left out of dates
	cat  Catalogue
}

var (
	germanWeekdays = [...]string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}
	germanMonths   = [...]string{"", "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
)

func (q questions) en() bool { return q.lang == "en" }

// day formats "Dienstag, 1. Dezember" or "Tuesday, December 1".
func (q questions) day(c civil) string {
	return q.weekday(c.weekday()) + ", " + q.date(c)
}

// date formats "1. Dezember" or "December 1", with the year only when it
// is not the current one.
func (q questions) date(c civil) string {
	var s string
	if q.en() {
		s = fmt.Sprintf("%s %d", c.m, c.d)
	} else {
		s = fmt.Sprintf("%d. %s", c.d, germanMonths[c.m])
	}
	if c.y != q.year {
		s += fmt.Sprintf(" %d", c.y)
	}
	return s
}

func (q questions) weekday(wd time.Weekday) string {
	if q.en() {
		return wd.String()
	}
	return germanWeekdays[wd]
}

// clock formats "14:00 Uhr" or "2:00 pm".
func (q questions) clock(h, m int) string {
	if !q.en() {
		return fmt.Sprintf("%02d:%02d Uhr", h, m)
	}
	suffix := "am"
	if h >= 12 {
		suffix = "pm"
	}
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	return fmt.Sprintf("%d:%02d %s", h12, m, suffix)
}

// offers lists the catalogue: " Wir bieten Reifenwechsel, Inspektion, Ölwechsel."
func (q questions) offers() string {
	if len(q.cat.Services) == 0 {
		return ""
	}
	names := make([]string, len(q.cat.Services))
	for i, s := range q.cat.Services {
		names[i] = s.Label(q.lang)
	}
	if q.en() {
		return " We offer " + strings.Join(names, ", ") + "."
	}
	return " Wir bieten " + strings.Join(names, ", ") + "."
}

func (q questions) service(id string) string {
	if s, ok := q.cat.Service(id); ok {
		return s.Label(q.lang)
	}
	return id
}

// missing asks for exactly what a booking lacks. day and clock are the
// formatted known parts ("" when unknown).
func (q questions) missing(needService bool, day, clock string) string {
	needDay, needTime := day == "", clock == ""
	if q.en() {
		switch {
		case needService && needDay && needTime:
			return "Which service, day and time would you like?" + q.offers()
		case needService && needDay:
			return "Which service would you like at " + clock + ", and on which day?" + q.offers()
		case needService && needTime:
			return "Which service would you like on " + day + ", and at what time?" + q.offers()
		case needService:
			return "Which service would you like on " + day + ", at " + clock + "?" + q.offers()
		case needDay && needTime:
			return "Which day and time work for you?"
		case needDay:
			return "Which day works for you at " + clock + "?"
		case needTime:
			return "What time on " + day + ", works for you?"
		}
		return ""
	}
	switch {
	case needService && needDay && needTime:
		return "Für welche Leistung, an welchem Tag und um welche Uhrzeit möchten Sie einen Termin?" + q.offers()
	case needService && needDay:
		return "Für welche Leistung und an welchem Tag möchten Sie um " + clock + " einen Termin?" + q.offers()
	case needService && needTime:
		return "Für welche Leistung möchten Sie am " + day + ", einen Termin, und um welche Uhrzeit?" + q.offers()
	case needService:
		return "Für welche Leistung möchten Sie am " + day + ", um " + clock + " einen Termin?" + q.offers()
	case needDay && needTime:
		return "An welchem Tag und um welche Uhrzeit passt es Ihnen?"
	case needDay:
		return "An welchem Tag passt es Ihnen um " + clock + "?"
	case needTime:
		return "Um welche Uhrzeit am " + day + ", passt es Ihnen?"
	}
	return ""
}

// missingFor asks for what res lacks to be booked; day is its day when
// res.HasDate.
func (q questions) missingFor(res Result, day civil) string {
	var dayText, clockText string
	if res.HasDate {
		dayText = q.day(day)
	}
	if res.HasTime {
		clockText = q.clock(res.Hour, res.Minute)
	}
	return q.missing(res.Service == "", dayText, clockText)
}

func (q questions) pick(en, de string) string {
	if q.en() {
		return en
	}
	return de
}

func (q questions) whichDay(a, b civil) string {
	return q.pick("Did you mean "+q.day(a)+", or "+q.day(b)+"?", "Meinten Sie "+q.day(a)+", oder "+q.day(b)+"?")
}

func (q questions) weekdayMismatch(d civil, said time.Weekday) string {
	if q.en() {
		return fmt.Sprintf("%s is a %s, not a %s. Which day did you mean?", q.date(d), d.weekday(), said)
	}
	return fmt.Sprintf("Der %s ist ein %s, kein %s. Welchen Tag meinten Sie?", q.date(d), q.weekday(d.weekday()), q.weekday(said))
}

func (q questions) invalidDate() string {
	return q.pick("That date does not exist. Which day did you mean?", "Dieses Datum gibt es nicht. Welchen Tag meinten Sie?")
}

func (q questions) whichTime(a, b [2]int) string {
	return q.pick("Did you mean "+q.clock(a[0], a[1])+" or "+q.clock(b[0], b[1])+"?",
		"Meinten Sie "+q.clock(a[0], a[1])+" oder "+q.clock(b[0], b[1])+"?")
}

func (q questions) invalidTime() string {
	return q.pick("What time exactly did you mean?", "Welche Uhrzeit meinten Sie genau?")
}

func (q questions) exactTime() string {
	return q.pick("At what exact time would you like to come?", "Zu welcher genauen Uhrzeit möchten Sie kommen?")
}

func (q questions) whichService(a, b string) string {
	return q.pick("Did you mean "+q.service(a)+" or "+q.service(b)+"?", "Meinten Sie "+q.service(a)+" oder "+q.service(b)+"?")
}

func (q questions) whichResource(a, b string) string {
	return q.pick("Did you mean "+a+" or "+b+"?", "Meinten Sie "+a+" oder "+b+"?")
}

func (q questions) instead() string {
	return q.pick("Which time would suit you instead?", "Welcher Termin passt Ihnen stattdessen?")
}

func (q questions) rescheduleWhen() string {
	return q.pick("To which day and time shall we move your appointment?",
		"Auf welchen Tag und welche Uhrzeit sollen wir Ihren Termin verschieben?")
}

func (q questions) unclear() string {
	return q.pick("Would you like to book, confirm or cancel an appointment?",
		"Möchten Sie einen Termin buchen, bestätigen oder stornieren?")
}
