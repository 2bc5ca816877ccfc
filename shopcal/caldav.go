package shopcal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/bookonce/bookonce/outcome"
)

// CalDAV is a resource's calendar on a CalDAV server (RFC 4791): each
// booking is the calendar object <EventID>.ics in the collection, written
// with conditional requests (RFC 7232): If-None-Match: * to create,
// If-Match with the ETag read to change or delete.
type CalDAV struct {
	// Calendar is the collection's URL, e.g.
	// https://dav.example.com/werkstatt/bay-1/.
	Calendar string
	// Username and Password authenticate by HTTP Basic ("": none).
	Username, Password string
	// HTTP makes the requests; nil: a client with a 30 s timeout.
	HTTP *http.Client
	// Now stamps the events (DTSTAMP); nil: time.Now.
	Now func() time.Time
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// Create PUTs the event if no object of its ID exists: 412 says one does.
func (c *CalDAV) Create(ctx context.Context, ev Event) (bool, error) {
	resp, err := c.put(ctx, "create", ev, "If-None-Match", "*")
	if err != nil {
		return false, err
	}
	switch {
	case resp == http.StatusPreconditionFailed:
		return false, nil
	case resp >= 200 && resp < 300:
		return true, nil
	}
	return false, c.refused("create", resp)
}

// Update PUTs the event over the object at version.
func (c *CalDAV) Update(ctx context.Context, ev Event, version string) error {
	resp, err := c.put(ctx, "update", ev, "If-Match", version)
	if err != nil {
		return err
	}
	switch {
	case resp == http.StatusPreconditionFailed:
		return ErrChanged
	case resp == http.StatusNotFound:
		return ErrGone
	case resp >= 200 && resp < 300:
		return nil
	}
	return c.refused("update", resp)
}

// Delete removes the object at version; 404 is an object gone already.
func (c *CalDAV) Delete(ctx context.Context, id, version string) error {
	req, err := c.request(ctx, http.MethodDelete, id, nil)
	if err != nil {
		return err
	}
	if version != "" {
		req.Header.Set("If-Match", version)
	}
	status, _, _, err := c.do("delete", req)
	if err != nil {
		return err
	}
	switch {
	case status == http.StatusPreconditionFailed:
		return ErrChanged
	case status == http.StatusNotFound, status >= 200 && status < 300:
		return nil
	}
	return c.refused("delete", status)
}

// Get reads the object of id and the event in it.
func (c *CalDAV) Get(ctx context.Context, id string) (Stored, bool, error) {
	req, err := c.request(ctx, http.MethodGet, id, nil)
	if err != nil {
		return Stored{}, false, err
	}
	status, etag, body, err := c.do("get", req)
	switch {
	case err != nil:
		return Stored{}, false, err
	case status == http.StatusNotFound:
		return Stored{}, false, nil
	case status != http.StatusOK:
		return Stored{}, false, c.refused("get", status)
	}
	ev, err := decodeEvent(body)
	if err != nil {
		return Stored{}, false, &Error{Op: "get", Status: status, Outcome: outcome.Final, Err: err}
	}
	if etag == "" {
		return Stored{}, false, &Error{Op: "get", Status: status, Outcome: outcome.Final, Err: errors.New("the server sent no ETag: changes could not be made safely")}
	}
	return Stored{Event: ev, Version: etag}, true, nil
}

// put sends ev with one precondition header and returns the status.
func (c *CalDAV) put(ctx context.Context, op string, ev Event, header, value string) (int, error) {
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(c.encode(ev)); err != nil {
		return 0, &Error{Op: op, Outcome: outcome.Final, Err: err}
	}
	req, err := c.request(ctx, http.MethodPut, ev.ID, &buf)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", ical.MIMEType)
	req.Header.Set(header, value)
	status, _, _, err := c.do(op, req)
	return status, err
}

func (c *CalDAV) request(ctx context.Context, method, id string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Calendar, "/")+"/"+id+".ics", body)
	if err != nil {
		return nil, &Error{Op: strings.ToLower(method), Outcome: outcome.Final, Err: err}
	}
	if c.Username != "" {
		req.SetBasicAuth(c.Username, c.Password)
	}
	return req, nil
}

// do sends req: an error is a request whose outcome nobody knows, which
// the same request under the same ID settles.
func (c *CalDAV) do(op string, req *http.Request) (status int, etag string, body []byte, err error) {
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", nil, &Error{Op: op, Outcome: outcome.Unknown, Err: err}
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, "", nil, &Error{Op: op, Status: resp.StatusCode, Outcome: outcome.Unknown, Err: err}
	}
	return resp.StatusCode, resp.Header.Get("ETag"), body, nil
}

// refused classifies an error status: the credentials, the rights or a
// calendar that is gone do not change by retrying (Final); a server's
// trouble (5xx, 429) does.
func (c *CalDAV) refused(op string, status int) error {
	err := errors.New(http.StatusText(status))
	class := outcome.Final
	if status == http.StatusTooManyRequests || status >= 500 {
		class = outcome.Retryable
	}
	return &Error{Op: op, Status: status, Outcome: class, Err: fmt.Errorf("%s %s: %w", op, c.Calendar, err)}
}

// encode is ev as an iCalendar object with one VEVENT.
func (c *CalDAV) encode(ev Event) *ical.Calendar {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	e := ical.NewEvent()
	e.Props.SetText(ical.PropUID, ev.ID)
	e.Props.SetDateTime(ical.PropDateTimeStamp, now().UTC())
	e.Props.SetDateTime(ical.PropDateTimeStart, ev.Start.UTC())
	e.Props.SetDateTime(ical.PropDateTimeEnd, ev.End.UTC())
	e.Props.SetText(ical.PropSummary, ev.Summary)
	if ev.Description != "" {
		e.Props.SetText(ical.PropDescription, ev.Description)
	}
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//bookonce//shop calendar//EN")
	cal.Children = append(cal.Children, e.Component)
	return cal
}

// decodeEvent reads the one VEVENT of an iCalendar object.
func decodeEvent(body []byte) (Event, error) {
	cal, err := ical.NewDecoder(bytes.NewReader(body)).Decode()
	if err != nil {
		return Event{}, fmt.Errorf("read the event: %w", err)
	}
	evs := cal.Events()
	if len(evs) != 1 {
		return Event{}, fmt.Errorf("read the event: %d events in the object, not one", len(evs))
	}
	e := evs[0]
	var ev Event
	if ev.ID, err = e.Props.Text(ical.PropUID); err != nil {
		return Event{}, fmt.Errorf("read the event's UID: %w", err)
	}
	if ev.Start, err = e.DateTimeStart(time.UTC); err != nil {
		return Event{}, fmt.Errorf("read the event's start: %w", err)
	}
	if ev.End, err = e.DateTimeEnd(time.UTC); err != nil {
		return Event{}, fmt.Errorf("read the event's end: %w", err)
	}
	ev.Summary, _ = e.Props.Text(ical.PropSummary) // absent: ""
	ev.Description, _ = e.Props.Text(ical.PropDescription)
	return ev, nil
}
