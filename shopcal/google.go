package shopcal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
	gcal "google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/bookonce/bookonce/outcome"
)

// Google's endpoints; a test or the drill points GoogleEndpoints at
// FakeGoogle, and nothing else differs.
const (
	GoogleCalendarURL = "https://www.googleapis.com/calendar/v3/"
	GoogleTokenURL    = "https://oauth2.googleapis.com/token"
)

// GoogleApp is bookonce's OAuth client at Google: one for the deployment;
// each shop's consent is a refresh token of it.
type GoogleApp struct {
	ClientID, ClientSecret string
	// BaseURL replaces https://www.googleapis.com and
	// https://oauth2.googleapis.com (a fake); "" is Google.
	BaseURL string
}

// Google is one resource's Google Calendar, through the Calendar API v3
// (google.golang.org/api) with the shop's refresh token.
type Google struct {
	Calendar string // the calendar's ID, e.g. werkstatt@group.calendar.google.com
	svc      *gcal.Service
}

// NewGoogle connects to a shop's calendar with its refresh token; hc
// carries the calls (timeouts, tracing) under the token's authorisation.
func NewGoogle(ctx context.Context, app GoogleApp, calendarID, refreshToken string, hc *http.Client) (*Google, error) {
	calURL, tokURL := GoogleCalendarURL, GoogleTokenURL
	if app.BaseURL != "" {
		base := strings.TrimRight(app.BaseURL, "/")
		calURL, tokURL = base+"/calendar/v3/", base+"/token"
	}
	cfg := &oauth2.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: tokURL, AuthStyle: oauth2.AuthStyleInParams}}
	// The token source keeps using hc for refreshes, beyond this ctx.
	tctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, hc)
	ts := cfg.TokenSource(tctx, &oauth2.Token{RefreshToken: refreshToken})
	authed := &http.Client{Timeout: hc.Timeout, Transport: &oauth2.Transport{Source: ts, Base: hc.Transport}}
	svc, err := gcal.NewService(ctx, option.WithHTTPClient(authed), option.WithEndpoint(calURL))
	if err != nil {
		return nil, &Error{Op: "connect", Outcome: outcome.Final, Err: err}
	}
	return &Google{Calendar: calendarID, svc: svc}, nil
}

// Create inserts ev under its ID; Google answers 409 for an ID that
// exists (a deleted event's too): the proof an earlier attempt landed.
func (g *Google) Create(ctx context.Context, ev Event) (bool, error) {
	_, err := g.svc.Events.Insert(g.Calendar, toGoogle(ev)).Context(ctx).Do()
	if googleStatus(err) == http.StatusConflict {
		return false, nil
	}
	if err != nil {
		return false, googleError("create", err)
	}
	return true, nil
}

// Get reads the event; a deleted one (Google keeps it as cancelled) is
// found with Cancelled set, since only an update brings its ID back.
func (g *Google) Get(ctx context.Context, id string) (Stored, bool, error) {
	ev, err := g.svc.Events.Get(g.Calendar, id).Context(ctx).Do()
	if s := googleStatus(err); s == http.StatusNotFound || s == http.StatusGone {
		return Stored{}, false, nil
	}
	if err != nil {
		return Stored{}, false, googleError("get", err)
	}
	st, err := fromGoogle(ev)
	if err != nil {
		return Stored{}, false, &Error{Op: "get", Outcome: outcome.Final, Err: err}
	}
	return st, true, nil
}

// Update replaces the event stored at version (its ETag), reviving it if
// it was deleted.
func (g *Google) Update(ctx context.Context, ev Event, version string) error {
	call := g.svc.Events.Update(g.Calendar, ev.ID, toGoogle(ev)).Context(ctx)
	call.Header().Set("If-Match", version)
	_, err := call.Do()
	return conditional("update", err, ErrGone)
}

// Delete cancels the event stored at version; one deleted already is.
func (g *Google) Delete(ctx context.Context, id, version string) error {
	call := g.svc.Events.Delete(g.Calendar, id).Context(ctx)
	call.Header().Set("If-Match", version)
	return conditional("delete", call.Do(), nil)
}

// conditional reads the failure of a write under If-Match: 412 is
// ErrChanged, an event gone (404, 410) is gone, anything else classified.
func conditional(op string, err, gone error) error {
	switch {
	case err == nil:
		return nil
	case googleStatus(err) == http.StatusPreconditionFailed:
		return ErrChanged
	case googleStatus(err) == http.StatusNotFound || googleStatus(err) == http.StatusGone:
		return gone
	}
	return googleError(op, err)
}

func toGoogle(ev Event) *gcal.Event {
	return &gcal.Event{Id: ev.ID, Summary: ev.Summary, Description: ev.Description, Status: "confirmed",
		Start: &gcal.EventDateTime{DateTime: ev.Start.UTC().Format(time.RFC3339)},
		End:   &gcal.EventDateTime{DateTime: ev.End.UTC().Format(time.RFC3339)}}
}

func fromGoogle(ev *gcal.Event) (Stored, error) {
	if ev.Start == nil || ev.End == nil {
		return Stored{}, fmt.Errorf("event %s has no start or end", ev.Id)
	}
	start, err1 := time.Parse(time.RFC3339, ev.Start.DateTime)
	end, err2 := time.Parse(time.RFC3339, ev.End.DateTime)
	if err := errors.Join(err1, err2); err != nil {
		return Stored{}, fmt.Errorf("event %s: %w", ev.Id, err)
	}
	return Stored{Event: Event{ID: ev.Id, Summary: ev.Summary, Description: ev.Description, Start: start, End: end},
		Version: ev.Etag, Cancelled: ev.Status == "cancelled"}, nil
}

// googleStatus is the HTTP status of a Google API error, 0 for none.
func googleStatus(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// googleError classifies a failed call at this boundary: Google's rate
// limits (429, or 403 rateLimitExceeded / userRateLimitExceeded) and its
// 5xx are retried; a refused consent (401, the token endpoint's
// invalid_grant) and any other 4xx are final, for a person to reconnect;
// no answer is unknown, retried under the same ID.
func googleError(op string, err error) error {
	if te, ok := tokenError(op, "google", err); ok {
		return te
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		class := outcome.Final
		if ge.Code >= 500 || ge.Code == http.StatusTooManyRequests || (ge.Code == http.StatusForbidden && rateLimited(ge)) {
			class = outcome.Retryable
		}
		return &Error{Op: op, Status: ge.Code, Outcome: class, Err: errors.New(ge.Message)}
	}
	return &Error{Op: op, Outcome: outcome.Unknown, Err: err}
}

func rateLimited(ge *googleapi.Error) bool {
	for _, e := range ge.Errors {
		if e.Reason == "rateLimitExceeded" || e.Reason == "userRateLimitExceeded" {
			return true
		}
	}
	return false
}
