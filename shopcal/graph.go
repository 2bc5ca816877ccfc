package shopcal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/bookonce/bookonce/outcome"
)

// Microsoft's endpoints; a test or the drill points MicrosoftApp.BaseURL
// at FakeGraph, and nothing else differs.
const (
	GraphURL     = "https://graph.microsoft.com"
	MicrosoftURL = "https://login.microsoftonline.com"
	graphScope   = "https://graph.microsoft.com/.default"
	// eventIDProperty is the single-value extended property that carries
	// EventID on bookonce's events: Graph chooses event IDs, so this is
	// how a retry finds the event an earlier attempt created.
	eventIDProperty = "String {5b3c58a8-2a5e-4c8e-9a57-0b6f1c1e9d21} Name bookonceEventId"
)

// MicrosoftApp is bookonce's app registration at Microsoft Entra, used
// app-only (client credentials, the Calendars.ReadWrite application
// permission) in each shop's tenant that granted it admin consent.
type MicrosoftApp struct {
	ClientID, ClientSecret string
	// BaseURL replaces graph.microsoft.com and login.microsoftonline.com
	// (a fake); "" is Microsoft.
	BaseURL string
}

// Graph is one resource's calendar in a Microsoft 365 mailbox, through
// Microsoft Graph v1.0 over plain HTTP.
type Graph struct {
	// User is the mailbox (e.g. werkstatt@autohaus.de), Calendar its
	// calendar's ID.
	User, Calendar string
	base           string
	http           *http.Client
}

// NewGraph connects to a calendar of a mailbox in the shop's Entra
// tenant; hc carries the calls under the app's token.
func NewGraph(ctx context.Context, app MicrosoftApp, tenant, user, calendar string, hc *http.Client) *Graph {
	graph, login := GraphURL, MicrosoftURL
	if app.BaseURL != "" {
		graph, login = strings.TrimRight(app.BaseURL, "/"), strings.TrimRight(app.BaseURL, "/")
	}
	cc := clientcredentials.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, Scopes: []string{graphScope},
		TokenURL: login + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token", AuthStyle: oauth2.AuthStyleInParams}
	tctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, hc)
	authed := &http.Client{Timeout: hc.Timeout, Transport: &oauth2.Transport{Source: cc.TokenSource(tctx), Base: hc.Transport}}
	return &Graph{User: user, Calendar: calendar, base: graph, http: authed}
}

// GraphEvent is an event as Graph's JSON has it (the fields bookonce uses).
type GraphEvent struct {
	ID             string           `json:"id,omitempty"`
	ETag           string           `json:"@odata.etag,omitempty"`
	Subject        string           `json:"subject,omitempty"`
	Body           *GraphBody       `json:"body,omitempty"`
	Start          GraphTime        `json:"start"`
	End            GraphTime        `json:"end"`
	ShowAs         string           `json:"showAs,omitempty"` // free, tentative, busy, oof, workingElsewhere
	IsAllDay       bool             `json:"isAllDay,omitempty"`
	IsCancelled    bool             `json:"isCancelled,omitempty"`
	Type           string           `json:"type,omitempty"` // singleInstance, occurrence, exception, seriesMaster
	SeriesMasterID string           `json:"seriesMasterId,omitempty"`
	TransactionID  string           `json:"transactionId,omitempty"`
	Recurrence     *GraphRecurrence `json:"recurrence,omitempty"`
	Properties     []GraphProperty  `json:"singleValueExtendedProperties,omitempty"`
}

// GraphBody is an event's body.
type GraphBody struct {
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}

// GraphTime is Graph's dateTimeTimeZone: a local time and its zone.
type GraphTime struct {
	DateTime string `json:"dateTime"`
	TimeZone string `json:"timeZone"`
}

// GraphRecurrence is a series' pattern and range (daily or weekly here).
type GraphRecurrence struct {
	Pattern struct {
		Type     string `json:"type"`
		Interval int    `json:"interval"`
	} `json:"pattern"`
	Range struct {
		Type                string `json:"type"` // numbered, endDate, noEnd
		NumberOfOccurrences int    `json:"numberOfOccurrences,omitempty"`
		EndDate             string `json:"endDate,omitempty"`
	} `json:"range"`
}

// GraphProperty is a single-value extended property.
type GraphProperty struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

const graphLayout = "2006-01-02T15:04:05.0000000"

func graphTime(t time.Time) GraphTime {
	return GraphTime{DateTime: t.UTC().Format(graphLayout), TimeZone: "UTC"}
}

// parseGraphTime reads a dateTimeTimeZone; a zone Go does not know is
// read in def.
func parseGraphTime(g GraphTime, def *time.Location) (time.Time, error) {
	loc := def
	if l, err := time.LoadLocation(g.TimeZone); err == nil {
		loc = l
	}
	return time.ParseInLocation("2006-01-02T15:04:05.9999999", g.DateTime, loc)
}

func (g *Graph) events() string {
	return g.base + "/v1.0/users/" + url.PathEscape(g.User) + "/calendars/" + url.PathEscape(g.Calendar) + "/events"
}

// Create posts the event with its EventID as Graph's transactionId (a
// retried create returns the event the first made) and as an extended
// property (how Get finds it). An event there already that says
// something else is answered created false, for Put to update it.
func (g *Graph) Create(ctx context.Context, ev Event) (bool, error) {
	if _, found, err := g.Get(ctx, ev.ID); err != nil || found {
		return false, err
	}
	body := toGraph(ev)
	body.TransactionID = ev.ID
	body.Properties = []GraphProperty{{ID: eventIDProperty, Value: ev.ID}}
	var got GraphEvent
	if err := g.do(ctx, "create", http.MethodPost, g.events(), "", body, &got); err != nil {
		return false, err
	}
	st, err := fromGraph(got, ev.ID)
	return err == nil && st.same(ev), err
}

// Get finds bookonce's event id by its extended property.
func (g *Graph) Get(ctx context.Context, id string) (Stored, bool, error) {
	filter := fmt.Sprintf("singleValueExtendedProperties/Any(ep: ep/id eq '%s' and ep/value eq '%s')", eventIDProperty, id)
	q := url.Values{"$filter": {filter}, "$expand": {fmt.Sprintf("singleValueExtendedProperties($filter=id eq '%s')", eventIDProperty)}}
	var page struct {
		Value []GraphEvent `json:"value"`
	}
	if err := g.do(ctx, "get", http.MethodGet, g.events()+"?"+q.Encode(), "", nil, &page); err != nil {
		return Stored{}, false, err
	}
	if len(page.Value) == 0 {
		return Stored{}, false, nil
	}
	st, err := fromGraph(page.Value[0], id)
	return st, err == nil, err
}

// Update patches the event stored at version; version is Graph's ID and
// ETag, as Get read them.
func (g *Graph) Update(ctx context.Context, ev Event, version string) error {
	gid, etag, _ := strings.Cut(version, " ")
	err := g.do(ctx, "update", http.MethodPatch, g.events()+"/"+url.PathEscape(gid), etag, toGraph(ev), nil)
	return graphConditional(err, ErrGone)
}

// Delete removes the event stored at version; one gone already is.
func (g *Graph) Delete(ctx context.Context, _ string, version string) error {
	gid, etag, _ := strings.Cut(version, " ")
	return graphConditional(g.do(ctx, "delete", http.MethodDelete, g.events()+"/"+url.PathEscape(gid), etag, nil, nil), nil)
}

func graphConditional(err, gone error) error {
	switch s := statusOfErr(err); {
	case err == nil:
		return nil
	case s == http.StatusPreconditionFailed:
		return ErrChanged
	case s == http.StatusNotFound:
		return gone
	}
	return err
}

func toGraph(ev Event) GraphEvent {
	return GraphEvent{Subject: ev.Summary, Body: &GraphBody{ContentType: "text", Content: ev.Description},
		Start: graphTime(ev.Start), End: graphTime(ev.End), ShowAs: "busy"}
}

func fromGraph(e GraphEvent, id string) (Stored, error) {
	start, err := parseGraphTime(e.Start, time.UTC)
	if err != nil {
		return Stored{}, &Error{Op: "read", Outcome: outcome.Final, Err: err}
	}
	end, err := parseGraphTime(e.End, time.UTC)
	if err != nil {
		return Stored{}, &Error{Op: "read", Outcome: outcome.Final, Err: err}
	}
	ev := Event{ID: id, Summary: e.Subject, Start: start, End: end}
	if e.Body != nil {
		ev.Description = e.Body.Content
	}
	return Stored{Event: ev, Version: e.ID + " " + e.ETag}, nil
}

// do sends one Graph call; its failure is classified here: Graph's
// throttling (429) and 5xx are retried, a withdrawn consent and other
// 4xx are final, no answer is unknown.
func (g *Graph) do(ctx context.Context, op, method, u, ifMatch string, body, out any) error {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &Error{Op: op, Outcome: outcome.Final, Err: err}
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rdr)
	if err != nil {
		return &Error{Op: op, Outcome: outcome.Final, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", `outlook.timezone="UTC"`)
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return tokenOr(op, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		class := outcome.OfStatus(resp.StatusCode)
		return &Error{Op: op, Status: resp.StatusCode, Outcome: class, Err: fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return &Error{Op: op, Status: resp.StatusCode, Outcome: outcome.Unknown, Err: err}
		}
	}
	return nil
}

// tokenOr classifies a call that got no answer from Graph: a refusal at
// the token endpoint (tokenError), or unknown.
func tokenOr(op string, err error) error {
	if te, ok := tokenError(op, "microsoft", err); ok {
		return te
	}
	return &Error{Op: op, Outcome: outcome.Unknown, Err: err}
}

func statusOfErr(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}
