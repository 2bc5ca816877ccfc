package shopcal

import (
	"context"
	"slices"
	"strings"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/bookonce/bookonce/outcome"
)

// Busy is what staff put in the Google calendar over [from, to): the
// events Google lists there with singleEvents (it expands recurring
// events into their instances, less their exceptions), not bookonce's
// own, not cancelled and not marked free (transparency "transparent");
// an all-day event as its whole days in loc. Not freeBusy.query: its
// intervals do not say which event is bookonce's own booking, which
// would then block itself.
func (g *Google) Busy(ctx context.Context, from, to time.Time, loc *time.Location) ([]Interval, error) {
	var out []Interval
	var bad error
	err := g.svc.Events.List(g.Calendar).Context(ctx).SingleEvents(true).ShowDeleted(false).MaxResults(2500).
		TimeMin(from.UTC().Format(time.RFC3339)).TimeMax(to.UTC().Format(time.RFC3339)).
		Pages(ctx, func(page *gcal.Events) error {
			for _, ev := range page.Items {
				if strings.HasPrefix(ev.Id, ownEvents) || ev.Status == "cancelled" || ev.Transparency == "transparent" {
					continue
				}
				start, err1 := googleTime(ev.Start, loc)
				end, err2 := googleTime(ev.End, loc)
				if err1 != nil || err2 != nil {
					bad = &Error{Op: "busy", Outcome: outcome.Final, Err: firstErr(err1, err2)}
					return bad
				}
				if end.After(from) && start.Before(to) {
					out = append(out, Interval{Start: start, End: end, UID: ev.Id})
				}
			}
			return nil
		})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, googleError("busy", err)
	}
	slices.SortFunc(out, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// googleTime reads a start or end: a time, or an all-day date (midnight
// in loc).
func googleTime(d *gcal.EventDateTime, loc *time.Location) (time.Time, error) {
	if d == nil {
		return time.Time{}, errNoTime
	}
	if d.DateTime != "" {
		return time.Parse(time.RFC3339, d.DateTime)
	}
	return time.ParseInLocation(time.DateOnly, d.Date, loc)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
