package shopcal

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"

	"github.com/bookonce/bookonce/outcome"
)

// Interval is a time the resource is busy in the shop's calendar, and
// the event that makes it so.
type Interval struct {
	Start, End time.Time
	UID        string
}

// ownEvents is how the IDs of bookonce's own events begin (EventID): its
// bookings are in bookonce's calendar already.
const ownEvents = "bookonce"

// Busy is what staff put in the calendar that overlaps [from, to): every
// event not bookonce's own, not cancelled and not marked free
// (TRANSP:TRANSPARENT); a recurring one expanded into its instances, less
// its EXDATEs, an instance moved by an override (RECURRENCE-ID) counted
// at its new time; an all-day event as its whole days in loc. The server
// selects the objects by a time-range calendar-query (RFC 4791 7.8); the
// instances are expanded here, since not every server expands.
func (c *CalDAV) Busy(ctx context.Context, from, to time.Time, loc *time.Location) ([]Interval, error) {
	objs, err := c.query(ctx, from, to)
	if err != nil {
		return nil, err
	}
	var out []Interval
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		found, err := busyIn(o.Data.Events(), from, to, loc)
		if err != nil {
			return nil, &Error{Op: "busy", Outcome: outcome.Final, Err: fmt.Errorf("%s: %w", o.Path, err)}
		}
		out = append(out, found...)
	}
	slices.SortFunc(out, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// query asks the server for the calendar objects with an event in the
// range.
func (c *CalDAV) query(ctx context.Context, from, to time.Time) ([]caldav.CalendarObject, error) {
	u, err := url.Parse(c.Calendar)
	if err != nil {
		return nil, &Error{Op: "busy", Outcome: outcome.Final, Err: err}
	}
	rec := &statusOf{next: c.HTTP}
	if c.HTTP == nil {
		rec.next = defaultHTTP
	}
	var hc webdav.HTTPClient = rec
	if c.Username != "" {
		hc = webdav.HTTPClientWithBasicAuth(rec, c.Username, c.Password)
	}
	client, err := caldav.NewClient(hc, u.Scheme+"://"+u.Host)
	if err != nil {
		return nil, &Error{Op: "busy", Outcome: outcome.Final, Err: err}
	}
	objs, err := client.QueryCalendar(ctx, u.Path, &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{
			{Name: ical.CompEvent, Start: from.UTC(), End: to.UTC()},
		}},
	})
	if err != nil {
		class := outcome.Unknown // no answer
		switch {
		case rec.status == http.StatusTooManyRequests || rec.status >= 500:
			class = outcome.Retryable
		case rec.status >= 400:
			class = outcome.Final
		}
		return nil, &Error{Op: "busy", Status: rec.status, Outcome: class, Err: err}
	}
	return objs, nil
}

// statusOf is the HTTP client of one query, keeping the status of the
// server's last answer: the CalDAV library reports an error status only
// as text.
type statusOf struct {
	next   *http.Client
	status int
}

func (s *statusOf) Do(req *http.Request) (*http.Response, error) {
	resp, err := s.next.Do(req)
	if err == nil {
		s.status = resp.StatusCode
	}
	return resp, err
}

// busyIn expands the events of one calendar object (a master and its
// overrides share a UID) into the busy intervals overlapping [from, to).
func busyIn(events []ical.Event, from, to time.Time, loc *time.Location) ([]Interval, error) {
	moved := map[int64]bool{} // the instants of instances an override replaces
	for _, e := range events {
		if e.Props.Get(ical.PropRecurrenceID) != nil {
			rid, err := e.Props.DateTime(ical.PropRecurrenceID, loc)
			if err != nil {
				return nil, err
			}
			moved[rid.Unix()] = true
		}
	}
	var out []Interval
	for _, e := range events {
		uid, _ := e.Props.Text(ical.PropUID)
		if strings.HasPrefix(uid, ownEvents) || free(e) {
			continue
		}
		start, err := e.DateTimeStart(loc)
		if err != nil {
			return nil, err
		}
		end, err := e.DateTimeEnd(loc)
		if err != nil {
			return nil, err
		}
		recurring := e.Props.Get(ical.PropRecurrenceID) == nil && e.Props.Get(ical.PropRecurrenceRule) != nil
		starts := []time.Time{start}
		if recurring {
			set, err := e.RecurrenceSet(loc)
			if err != nil {
				return nil, err
			}
			starts = set.Between(from.Add(-end.Sub(start)), to, true)
		}
		for _, s := range starts {
			if recurring && moved[s.Unix()] {
				continue // the override stands for it
			}
			iv := Interval{Start: s, End: s.Add(end.Sub(start)), UID: uid}
			if iv.End.After(from) && iv.Start.Before(to) {
				out = append(out, iv)
			}
		}
	}
	return out, nil
}

// free reports whether an event does not block time: cancelled, or
// marked free (TRANSP:TRANSPARENT).
func free(e ical.Event) bool {
	status, _ := e.Props.Text(ical.PropStatus)
	transp, _ := e.Props.Text(ical.PropTransparency)
	return strings.EqualFold(status, string(ical.EventCancelled)) || strings.EqualFold(transp, "TRANSPARENT")
}
