package testsupport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SlotLead is how far ahead Slot puts a test's appointment: past every
// rule of the demo tenant that looks at the distance to the slot (the
// free cancellation until 24 h before, the reminders 24 h and 2 h before,
// a move to another slot that far ahead), with a day to spare for a long
// test run. A test whose outcome is about one of those rules picks its
// slot with NextWeekdayAfter and the lead that rule needs, or passes a
// clock.
const SlotLead = 72 * time.Hour

// Slot returns hour:00 Berlin time (the demo tenant's business time zone)
// on the first given weekday at least SlotLead from now, so the same test
// sees the same rules on every day of the week and at every hour; for
// hours the demo resources open it is inside opening hours.
func Slot(t testing.TB, wd time.Weekday, hour int) time.Time {
	t.Helper()
	return NextWeekdayAfter(t, wd, hour, SlotLead)
}

// SpokenWeekday returns hour:00 Berlin time on the day a customer means
// by naming the weekday ("Dienstag 14 Uhr"): the next one after today,
// however close. Only for tests whose outcome does not depend on how far
// ahead the slot is (a booking, not a cancel or a move).
func SpokenWeekday(t testing.TB, wd time.Weekday, hour int) time.Time {
	t.Helper()
	return NextWeekdayAfter(t, wd, hour, 0)
}

// NextWeekdayAfter returns hour:00 Berlin time on the first given weekday
// after today that is at least lead from now (a week later if the next
// one is closer), for tests whose outcome depends on how far ahead the
// slot is, e.g. a free cancellation until 24 h before it. The wall-clock
// hour is kept across a change to or from summer time.
func NextWeekdayAfter(t testing.TB, wd time.Weekday, hour int, lead time.Duration) time.Time {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	return weekdayAfter(time.Now(), berlin, wd, hour, lead)
}

// weekdayAfter is NextWeekdayAfter at the moment now, so that its promise
// can be checked for every day and hour of a year.
func weekdayAfter(now time.Time, loc *time.Location, wd time.Weekday, hour int, lead time.Duration) time.Time {
	d := now.In(loc).AddDate(0, 0, 1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	slot := time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, loc)
	for slot.Sub(now) < lead {
		slot = time.Date(slot.Year(), slot.Month(), slot.Day()+7, hour, 0, 0, 0, loc)
	}
	return slot
}
