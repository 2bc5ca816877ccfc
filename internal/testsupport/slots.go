package testsupport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// NextWeekday returns hour:00 Berlin time (the demo tenant's business time
// zone) on the next given weekday after today, so a slot built from it is
// in the future and, for hours the demo resources open, inside opening
// hours, whatever day the test runs.
func NextWeekday(t testing.TB, wd time.Weekday, hour int) time.Time {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	d := time.Now().In(berlin).AddDate(0, 0, 1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, berlin)
}

// NextWeekdayAfter is NextWeekday at least lead from now (a week later if
// the next one is closer), for tests whose outcome depends on how far
// ahead the slot is, e.g. a free cancellation until 24 h before it.
func NextWeekdayAfter(t testing.TB, wd time.Weekday, hour int, lead time.Duration) time.Time {
	t.Helper()
	slot := NextWeekday(t, wd, hour)
	for time.Until(slot) < lead {
		slot = slot.AddDate(0, 0, 7)
	}
	return slot
}
