package drill

import (
	"fmt"
	"time"
)

// words name the services as customers say them.
var words = map[string]string{"tire-change": "Reifenwechsel", "inspection": "Inspektion", "oil-change": "Ölwechsel"}

// firstTexts are ways to ask for a booking in one message; every one must
// be understood exactly (TestPhrasingsAreUnderstood).
var firstTexts = []func(svc string, t time.Time) string{
	func(svc string, t time.Time) string { return fmt.Sprintf("%s am %s um %d Uhr", svc, date(t), t.Hour()) },
	func(svc string, t time.Time) string {
		return fmt.Sprintf("Hallo, ich hätte gern einen Termin zum %s am %s um %02d:00", svc, date(t), t.Hour())
	},
	func(svc string, t time.Time) string { return fmt.Sprintf("%s %s %d Uhr bitte", svc, date(t), t.Hour()) },
	func(svc string, t time.Time) string { return fmt.Sprintf("Am %s um %d Uhr %s", date(t), t.Hour(), svc) },
}

// againTexts are the same wish in other words, as a customer repeats it.
var againTexts = []func(svc string, t time.Time) string{
	func(svc string, t time.Time) string {
		return fmt.Sprintf("Ja, %s %d Uhr %s passt", date(t), t.Hour(), svc)
	},
	func(svc string, t time.Time) string {
		return fmt.Sprintf("Nochmal: %s bitte am %s um %d Uhr", svc, date(t), t.Hour())
	},
}

// spokenTexts are what the speech recogniser hands over on a call.
var spokenTexts = []func(svc string, t time.Time) string{
	func(svc string, t time.Time) string { return fmt.Sprintf("Am %s um %d Uhr %s", date(t), t.Hour(), svc) },
	func(svc string, t time.Time) string {
		return fmt.Sprintf("ich möchte einen %s am %s um %d Uhr", svc, date(t), t.Hour())
	},
}

func date(t time.Time) string { return t.Format("02.01.2006") }

func pick(list []func(string, time.Time) string, n int, w Wish) string {
	return list[n%len(list)](words[w.Service], w.Start)
}
