package testsupport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWeekdayAfterKeepsItsPromiseAtEveryHourOfTheYear walks every hour of
// 2026 (both changes of summer time included) and checks what the tests
// rely on: the slot is on the asked weekday at the asked wall-clock hour,
// at least the lead ahead, and less than a week more than that.
func TestWeekdayAfterKeepsItsPromiseAtEveryHourOfTheYear(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	cases := []struct {
		name string
		wd   time.Weekday
		hour int
		lead time.Duration
	}{
		{"a slot with SlotLead", time.Thursday, 10, SlotLead},
		{"a spoken weekday", time.Tuesday, 14, 0},
		{"a slot a week and a day ahead", time.Monday, 8, 8 * 24 * time.Hour},
		{"an evening slot with a day's lead", time.Saturday, 17, 24 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
			for now := start; now.Year() == 2026; now = now.Add(time.Hour) {
				slot := weekdayAfter(now, berlin, tc.wd, tc.hour, tc.lead)
				require.Equal(t, tc.wd, slot.Weekday(), "at %s", now)
				require.Equal(t, tc.hour, slot.Hour(), "at %s", now)
				require.GreaterOrEqual(t, slot.Sub(now), tc.lead, "at %s", now)
				require.Less(t, slot.Sub(now), tc.lead+8*24*time.Hour, "at %s", now)
				y, m, d := now.In(berlin).Date()
				tomorrow := time.Date(y, m, d+1, 0, 0, 0, 0, berlin)
				require.False(t, slot.Before(tomorrow), "not today, at %s", now)
			}
		})
	}
}
