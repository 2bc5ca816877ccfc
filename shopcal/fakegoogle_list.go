package shopcal

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
	gcal "google.golang.org/api/calendar/v3"
)

// list is events.list: the events overlapping [timeMin, timeMax), a
// recurring one as its instances with singleEvents=true, deleted ones only
// with showDeleted=true, a page of maxResults (default 250) at a time.
func (f *FakeGoogle) list(w http.ResponseWriter, r *http.Request, events map[string]*gcal.Event) {
	q := r.URL.Query()
	from, to := time.Time{}, time.Time{}.AddDate(9999, 0, 0)
	for _, p := range []struct {
		name string
		into *time.Time
	}{{"timeMin", &from}, {"timeMax", &to}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				writeGoogleError(w, http.StatusBadRequest, "badRequest", "Bad Request")
				return
			}
			*p.into = t
		}
	}
	var out []*gcal.Event
	for _, ev := range events {
		if ev.Status == "cancelled" && q.Get("showDeleted") != "true" {
			continue
		}
		instances := []*gcal.Event{ev}
		if len(ev.Recurrence) > 0 && q.Get("singleEvents") == "true" {
			instances = expand(ev, from, to)
		}
		for _, in := range instances {
			s, e := eventSpan(in)
			if len(in.Recurrence) > 0 || (e.After(from) && s.Before(to)) {
				out = append(out, in)
			}
		}
	}
	slices.SortFunc(out, func(a, b *gcal.Event) int {
		sa, _ := eventSpan(a)
		sb, _ := eventSpan(b)
		if c := sa.Compare(sb); c != 0 {
			return c
		}
		return strings.Compare(a.Id, b.Id)
	})
	size, _ := strconv.Atoi(q.Get("maxResults"))
	if size <= 0 || size > 2500 {
		size = 250
	}
	offset, _ := strconv.Atoi(q.Get("pageToken"))
	page := &gcal.Events{Kind: "calendar#events", TimeZone: "UTC", Items: []*gcal.Event{}}
	if offset < len(out) {
		page.Items = out[offset:min(offset+size, len(out))]
	}
	if offset+size < len(out) {
		page.NextPageToken = strconv.Itoa(offset + size)
	}
	writeGoogleJSON(w, http.StatusOK, page)
}

// expand lists the instances of a recurring event (its RRULE, less its
// EXDATEs) that overlap [from, to), as Google does with singleEvents.
func expand(ev *gcal.Event, from, to time.Time) []*gcal.Event {
	start, end := eventSpan(ev)
	lines := []string{"DTSTART:" + start.UTC().Format("20060102T150405Z")}
	lines = append(lines, ev.Recurrence...)
	set, err := rrule.StrToRRuleSet(strings.Join(lines, "\n"))
	if err != nil {
		return nil
	}
	d := end.Sub(start)
	var out []*gcal.Event
	for _, s := range set.Between(from.Add(-d), to, true) {
		in := *ev
		in.Recurrence, in.RecurringEventId = nil, ev.Id
		in.Id = ev.Id + "_" + s.UTC().Format("20060102T150405Z")
		in.OriginalStartTime = &gcal.EventDateTime{DateTime: s.UTC().Format(time.RFC3339)}
		in.Start = &gcal.EventDateTime{DateTime: s.UTC().Format(time.RFC3339)}
		in.End = &gcal.EventDateTime{DateTime: s.Add(d).UTC().Format(time.RFC3339)}
		out = append(out, &in)
	}
	return out
}

// eventSpan is when an event starts and ends; an all-day event's dates
// are taken in UTC here (the fake's calendars are in UTC).
func eventSpan(ev *gcal.Event) (time.Time, time.Time) {
	at := func(d *gcal.EventDateTime) time.Time {
		if d == nil {
			return time.Time{}
		}
		if d.DateTime != "" {
			t, _ := time.Parse(time.RFC3339, d.DateTime)
			return t
		}
		t, _ := time.Parse(time.DateOnly, d.Date)
		return t
	}
	return at(ev.Start), at(ev.End)
}

// Events lists a calendar's events as stored, deleted ones with status
// "cancelled".
func (f *FakeGoogle) Events(calendarID string) []gcal.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]gcal.Event, 0, len(f.calendars[calendarID]))
	for _, ev := range f.calendars[calendarID] {
		out = append(out, *ev)
	}
	return out
}

// Remove deletes an event as staff do in a calendar app: Google keeps it
// as "cancelled". One that is not there is nothing to remove.
func (f *FakeGoogle) Remove(calendarID, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev, ok := f.calendars[calendarID][id]; ok && ev.Status != "cancelled" {
		ev.Status = "cancelled"
		f.stamp(ev)
		f.changed(calendarID)
	}
}
