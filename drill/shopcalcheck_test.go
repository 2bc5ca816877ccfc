package drill

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCalendarDiffCountsWhatStaffWouldSeeWrong: an event twice (in one
// calendar or in two of a shop's), a confirmed booking without its event,
// and an event no confirmed booking owns are each counted; a booking once
// where it belongs is not.
func TestCalendarDiffCountsWhatStaffWouldSeeWrong(t *testing.T) {
	bay1, bay2 := calKey{"demo", "bay-1"}, calKey{"demo", "bay-2"}
	for _, c := range []struct {
		name                       string
		expected                   map[string][]calKey
		actual                     map[calKey][]string
		duplicates, missing, stray int
	}{
		{"each once where it belongs", map[string][]calKey{"bookonce1": {bay1}, "bookonce2": {bay2}},
			map[calKey][]string{bay1: {"bookonce1"}, bay2: {"bookonce2"}}, 0, 0, 0},
		{"twice in one calendar", map[string][]calKey{"bookonce1": {bay1}},
			map[calKey][]string{bay1: {"bookonce1", "bookonce1"}}, 1, 0, 0},
		{"a move left the old event", map[string][]calKey{"bookonce1": {bay2}},
			map[calKey][]string{bay1: {"bookonce1"}, bay2: {"bookonce1"}}, 1, 0, 1},
		{"a confirmed booking without its event", map[string][]calKey{"bookonce1": {bay1}},
			map[calKey][]string{bay1: {}}, 0, 1, 0},
		{"a cancelled booking's event left", map[string][]calKey{},
			map[calKey][]string{bay1: {"bookonce9"}}, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := calendarDiff(c.expected, c.actual)
			require.Equal(t, []int{c.duplicates, c.missing, c.stray}, []int{s.Duplicates, s.Missing, s.Stray}, s.Examples)
			require.Equal(t, s.Total() == 0, s.failures() == nil)
		})
	}
}

// TestOverBusyCountsBookingsHeldAfterStaffTookTheSlot: a booking held
// after staff's appointment was entered over its slot (and not deleted by
// then) is counted; one held before it, after its deletion, on another
// resource or at another time is not.
func TestOverBusyCountsBookingsHeldAfterStaffTookTheSlot(t *testing.T) {
	bay1, bay2 := calKey{"demo", "bay-1"}, calKey{"demo", "bay-2"}
	t0 := time.Date(2030, 3, 12, 9, 0, 0, 0, time.UTC)
	entered := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ev := staffEvent{key: bay1, uid: "frontdesk1", start: t0, end: t0.Add(time.Hour), entered: entered}
	deleted := ev
	deleted.deleted = entered.Add(time.Minute)
	for _, c := range []struct {
		name string
		b    booked
		ev   staffEvent
		want int
	}{
		{"held after it was entered", booked{key: bay1, start: t0.Add(30 * time.Minute), end: t0.Add(time.Hour), created: entered.Add(10 * time.Second)}, ev, 1},
		{"held before it was entered", booked{key: bay1, start: t0, end: t0.Add(time.Hour), created: entered.Add(-time.Second)}, ev, 0},
		{"held after its deletion", booked{key: bay1, start: t0, end: t0.Add(time.Hour), created: entered.Add(2 * time.Minute)}, deleted, 0},
		{"held while it stood, deleted later", booked{key: bay1, start: t0, end: t0.Add(time.Hour), created: entered.Add(30 * time.Second)}, deleted, 1},
		{"on another bay", booked{key: bay2, start: t0, end: t0.Add(time.Hour), created: entered.Add(10 * time.Second)}, ev, 0},
		{"right after it", booked{key: bay1, start: t0.Add(time.Hour), end: t0.Add(2 * time.Hour), created: entered.Add(10 * time.Second)}, ev, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, ex := overBusy([]booked{c.b}, []staffEvent{c.ev})
			require.Equal(t, c.want, n, ex)
		})
	}
}
