package drill

import (
	"testing"

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
