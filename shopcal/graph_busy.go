package shopcal

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/outcome"
)

// Busy is what staff put in the Outlook calendar over [from, to): Graph's
// calendarView (recurring series expanded into occurrences, in UTC),
// following its pages, skipping bookonce's own events (the extended
// property), cancelled ones and those shown as free; an all-day event
// blocks its whole days in loc.
func (g *Graph) Busy(ctx context.Context, from, to time.Time, loc *time.Location) ([]Interval, error) {
	q := url.Values{"startDateTime": {from.UTC().Format(time.RFC3339)}, "endDateTime": {to.UTC().Format(time.RFC3339)},
		"$top": {strconv.Itoa(500)}, "$select": {"id,start,end,showAs,isAllDay,isCancelled,type"},
		"$expand": {"singleValueExtendedProperties($filter=id eq '" + eventIDProperty + "')"}}
	next := g.base + "/v1.0/users/" + url.PathEscape(g.User) + "/calendars/" + url.PathEscape(g.Calendar) + "/calendarView?" + q.Encode()
	var out []Interval
	for next != "" {
		var page struct {
			Value []GraphEvent `json:"value"`
			Next  string       `json:"@odata.nextLink"`
		}
		if err := g.do(ctx, "busy", http.MethodGet, next, "", nil, &page); err != nil {
			return nil, err
		}
		for _, e := range page.Value {
			if e.IsCancelled || e.ShowAs == "free" || own(e) {
				continue
			}
			iv, err := graphInterval(e, loc)
			if err != nil {
				return nil, &Error{Op: "busy", Outcome: outcome.Final, Err: err}
			}
			if iv.End.After(from) && iv.Start.Before(to) {
				out = append(out, iv)
			}
		}
		next = page.Next
	}
	slices.SortFunc(out, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	return out, nil
}

func own(e GraphEvent) bool {
	return slices.ContainsFunc(e.Properties, func(p GraphProperty) bool { return p.ID == eventIDProperty })
}

// graphInterval is when an event blocks: its times, or for an all-day
// event its dates in loc.
func graphInterval(e GraphEvent, loc *time.Location) (Interval, error) {
	start, err1 := parseGraphTime(e.Start, time.UTC)
	end, err2 := parseGraphTime(e.End, time.UTC)
	if err := errors.Join(err1, err2); err != nil {
		return Interval{}, err
	}
	if e.IsAllDay {
		start = time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, loc)
		end = time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, loc)
	}
	return Interval{Start: start, End: end, UID: e.ID}, nil
}
