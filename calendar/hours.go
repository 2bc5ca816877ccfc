package calendar

import (
	"fmt"
	"slices"
	"time"
)

// openInterval returns the opening interval of r on the business day of t.
func openInterval(r Resource, t time.Time, tz *time.Location) (time.Time, time.Time, bool) {
	local := t.In(tz)
	wd := int(local.Weekday())
	if wd == 0 {
		wd = 7 // ISO: Sunday is 7
	}
	if !slices.Contains(r.Weekdays, wd) {
		return time.Time{}, time.Time{}, false
	}
	open, err1 := clock(local, r.Opens, tz)
	closeAt, err2 := clock(local, r.Closes, tz)
	if err1 != nil || err2 != nil {
		return time.Time{}, time.Time{}, false
	}
	return open, closeAt, true
}

func clock(day time.Time, hhmm string, tz *time.Location) (time.Time, error) {
	var h, m int
	if _, err := fmt.Sscanf(hhmm, "%d:%d", &h, &m); err != nil {
		return time.Time{}, err
	}
	return time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, tz), nil
}

// withinHours reports whether [start, end) lies inside r's opening hours.
func withinHours(r Resource, start, end time.Time, tz *time.Location) bool {
	open, closeAt, ok := openInterval(r, start, tz)
	return ok && !start.Before(open) && !end.After(closeAt)
}

// freeSlots lists slots of length d on the resource between from and to,
// stepping by step, skipping busy intervals and closed hours.
func freeSlots(r Resource, busy [][2]time.Time, from, to time.Time, d, step time.Duration, tz *time.Location, limit int) []Slot {
	var out []Slot
	for day := from.In(tz); day.Before(to) && len(out) < limit; day = nextDay(day, tz) {
		open, closeAt, ok := openInterval(r, day, tz)
		if !ok {
			continue
		}
		for s := open; !s.Add(d).After(closeAt) && len(out) < limit; s = s.Add(step) {
			e := s.Add(d)
			if s.Before(from) || e.After(to) {
				continue
			}
			if !overlapsAny(busy, s, e) {
				out = append(out, Slot{ResourceID: r.ID, Start: s.UTC(), End: e.UTC()})
			}
		}
	}
	return out
}

func nextDay(t time.Time, tz *time.Location) time.Time {
	l := t.In(tz)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, tz)
}

func overlapsAny(busy [][2]time.Time, s, e time.Time) bool {
	for _, b := range busy {
		if s.Before(b[1]) && b[0].Before(e) {
			return true
		}
	}
	return false
}
