// Package twilio is everything bookonce knows about Twilio's wire
// protocols, in both directions.
//
// Client (messenger.go) sends outbound messages through Twilio's
// Programmable Messaging API (WhatsApp and SMS) with the official
// twilio-go library, and classifies every failure at this boundary: a
// caller learns whether Twilio certainly did not create the message
// (retryable), certainly will never accept it (final) or may have created
// it (unknown outcome: a timeout, a lost response after the request was
// written, or any error answer that is not Twilio's own error document
// with a Twilio error code, such as a proxy's bare 503). Twilio's Messages
// API has no idempotency key, so an unknown outcome is settled by
// FindSent, never by sending again.
//
// FakeServer (fake.go) is a wire-level fake of the same API for tests and
// `make run`; Simulator (simulate.go) posts webhooks signed as Twilio
// signs them, so the gateway can be driven without Twilio.
package twilio

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	twclient "github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
)

// Outcome is what a failed call means for the message (package outcome).
type Outcome = outcome.Outcome

// Outcomes of a failed call.
const (
	// Unknown: the request may have reached Twilio and created the
	// message: a timeout, a connection lost after the request was written,
	// an unreadable success, and every error answer that is not Twilio's
	// own error document with a Twilio error code (a bare 502/503/504 or
	// an HTML page from a proxy or load balancer, which may come after
	// Twilio accepted the message). Look it up; never re-send blindly.
	Unknown = outcome.Unknown
	// Retryable: Twilio certainly did not create the message: the request
	// never left, or Twilio answered 429, 503 or an account/credential
	// problem with its error document; sending again later is safe.
	Retryable = outcome.Retryable
	// Final: Twilio refused this message with its error document (e.g.
	// 400 with 21211 invalid number); sending it again fails the same way.
	Final = outcome.Final
)

// Error is a classified failure of a Twilio call.
type Error struct {
	Op      string // "send" or "find"
	Outcome Outcome
	Status  int // HTTP status of Twilio's answer; 0 if there was none
	Code    int // Twilio error code (https://www.twilio.com/docs/api/errors); 0 if none
	Err     error
}

func (e *Error) Error() string {
	s := "twilio " + e.Op + " (" + e.Outcome.String() + " outcome"
	if e.Status != 0 {
		s += fmt.Sprintf(", HTTP %d", e.Status)
	}
	if e.Code != 0 {
		s += fmt.Sprintf(", code %d", e.Code)
	}
	return s + "): " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports that Twilio certainly did not create the message.
func (e *Error) Retryable() bool { return e.Outcome == Retryable }

// Final reports that Twilio refused the message for good.
func (e *Error) Final() bool { return e.Outcome == Final }

// UnknownOutcome reports that the message may exist at Twilio.
func (e *Error) UnknownOutcome() bool { return e.Outcome == Unknown }

// Class is the outcome of the failed call: how callers (the outbox) learn
// what the boundary decided, without knowing Twilio's codes.
func (e *Error) Class() outcome.Outcome { return e.Outcome }

// Client sends and looks up messages of one Twilio account.
type Client struct {
	accountSID string
	authToken  string
	from       string
	base       *url.URL // nil: https://api.twilio.com
	transport  http.RoundTripper
	timeout    time.Duration
	skew       time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sends every request to base (scheme, host and an optional
// path prefix) instead of https://api.twilio.com, e.g. a FakeServer's
// URL. It panics on a malformed URL.
func WithBaseURL(base string) Option {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		panic(fmt.Sprintf("twilio: invalid base URL %q", base))
	}
	return func(c *Client) { c.base = u }
}

// WithTransport sets the HTTP transport (default: a clone of
// http.DefaultTransport, traced when tracing is on).
func WithTransport(rt http.RoundTripper) Option {
	return func(c *Client) { c.transport = rt }
}

// WithTimeout bounds each call (default 30s); the caller's context may
// bound it further.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// WithClockSkew sets how far Twilio's clock may be behind ours when
// FindSent compares a message's date_created with since (default 5m).
func WithClockSkew(d time.Duration) Option {
	return func(c *Client) { c.skew = d }
}

// New returns a client for the account that sends from the number from
// (E.164; for WhatsApp the same number is used as "whatsapp:<from>").
func New(accountSID, authToken, from string, opts ...Option) *Client {
	c := &Client{
		accountSID: accountSID,
		authToken:  authToken,
		from:       from,
		transport:  tracing.Transport(http.DefaultTransport.(*http.Transport).Clone()),
		timeout:    30 * time.Second,
		skew:       5 * time.Minute,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Send creates a message from the number from ("": the client's) to the
// channel address to: "whatsapp:+49…" for WhatsApp (sent from
// "whatsapp:<from>"), a plain E.164 number for SMS. statusCallback, if
// not empty, receives Twilio's status updates. It returns the message
// SID; every error is an *Error with its Outcome.
func (c *Client) Send(ctx context.Context, from, to, body, statusCallback string) (string, error) {
	toAddr, fromAddr := c.addresses(from, to)
	p := &openapi.CreateMessageParams{}
	p.SetTo(toAddr).SetFrom(fromAddr).SetBody(body)
	return c.create(ctx, p, statusCallback)
}

// SendContent creates a message from an approved content template
// (Twilio's Content API): contentSid ("HX…") filled with vars by
// placeholder number ("1": …). Outside WhatsApp's customer service
// window only such a message reaches the customer. It answers like Send.
func (c *Client) SendContent(ctx context.Context, from, to, contentSid string, vars map[string]string, statusCallback string) (string, error) {
	toAddr, fromAddr := c.addresses(from, to)
	p := &openapi.CreateMessageParams{}
	p.SetTo(toAddr).SetFrom(fromAddr).SetContentSid(contentSid)
	if len(vars) > 0 {
		b, err := json.Marshal(vars)
		if err != nil {
			return "", &Error{Op: "send", Outcome: Final, Err: fmt.Errorf("content variables: %w", err)}
		}
		p.SetContentVariables(string(b))
	}
	return c.create(ctx, p, statusCallback)
}

// create sends a prepared create request and classifies its failure.
func (c *Client) create(ctx context.Context, p *openapi.CreateMessageParams, statusCallback string) (string, error) {
	if statusCallback != "" {
		p.SetStatusCallback(statusCallback)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	svc, at := c.service(ctx)
	defer at.close()
	m, err := svc.CreateMessage(p)
	if err != nil {
		return "", at.classify("send", err)
	}
	if m.Sid == nil || *m.Sid == "" {
		return "", &Error{Op: "send", Outcome: Unknown, Status: at.lastStatus(), Err: errors.New("answer without a message sid")}
	}
	return *m.Sid, nil
}

// FindSent lists the outbound messages to the address to with exactly
// body, created at or after since (less the clock skew), from the number
// from ("": the client's), earliest first. It lists the messages between the two
// addresses without a date filter (Twilio's date filters use date_sent,
// which a message still queued does not have yet, so a filtered list
// would miss it) and matches body and date_created here. An empty result
// means Twilio answered with a list that reaches back past since and
// holds no such message: then no such message exists
// (AuthoritativeListing). Several results are several messages of the
// same text (the skew reaches back minutes): which one is whose is the
// caller's to decide.
func (c *Client) FindSent(ctx context.Context, from, to, body string, since time.Time) ([]string, error) {
	toAddr, fromAddr := c.addresses(from, to)
	cutoff := since.Add(-c.skew)
	p := &openapi.ListMessageParams{}
	p.SetTo(toAddr).SetFrom(fromAddr).SetPageSize(100).SetLimit(findLimit)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	svc, at := c.service(ctx)
	defer at.close()
	msgs, err := svc.ListMessage(p)
	if err != nil {
		return nil, at.classify("find", err)
	}
	type match struct {
		sid     string
		created time.Time
	}
	var found []match
	for _, m := range msgs {
		if m.Sid == nil || m.Body == nil || *m.Body != body {
			continue
		}
		if m.Direction != nil && !strings.HasPrefix(*m.Direction, "outbound") {
			continue
		}
		if m.DateCreated == nil {
			return nil, &Error{Op: "find", Outcome: Unknown, Err: fmt.Errorf("message %s without date_created", *m.Sid)}
		}
		created, err := time.Parse(time.RFC1123Z, *m.DateCreated)
		if err != nil {
			return nil, &Error{Op: "find", Outcome: Unknown, Err: fmt.Errorf("message %s: date_created: %w", *m.Sid, err)}
		}
		if !created.Before(cutoff) {
			found = append(found, match{*m.Sid, created})
		}
	}
	if len(found) == 0 && len(msgs) >= findLimit {
		// The list was cut and may not reach back to since: absence unproven.
		return nil, &Error{Op: "find", Outcome: Unknown, Err: fmt.Errorf("more than %d messages to one address", findLimit)}
	}
	// date_created has second precision: the SID breaks ties so that every
	// caller sees the same order.
	sort.Slice(found, func(i, j int) bool {
		if !found[i].created.Equal(found[j].created) {
			return found[i].created.Before(found[j].created)
		}
		return found[i].sid < found[j].sid
	})
	sids := make([]string, len(found))
	for i, m := range found {
		sids[i] = m.sid
	}
	return sids, nil
}

// MessageStatus reads message sid's delivery status as its status
// callback reports it ("queued", "sent", "delivered", "read", "failed",
// "undelivered", …) and, for a failure, Twilio's error code and what it
// means (DescribeFailure): the relay asks so about a message whose
// callback never arrived (outbox.StatusReader).
func (c *Client) MessageStatus(ctx context.Context, sid string) (status, code, reason string, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	svc, at := c.service(ctx)
	defer at.close()
	m, err := svc.FetchMessage(sid, &openapi.FetchMessageParams{})
	if err != nil {
		return "", "", "", at.classify("status", err)
	}
	if m.Status == nil {
		return "", "", "", &Error{Op: "status", Outcome: Unknown, Err: fmt.Errorf("message %s without a status", sid)}
	}
	if m.ErrorCode != nil && *m.ErrorCode != 0 {
		code = strconv.Itoa(*m.ErrorCode)
	}
	return *m.Status, code, DescribeFailure(code), nil
}

// findLimit bounds the messages FindSent reads for one address.
const findLimit = 1000

// AuthoritativeListing reports that FindSent's "not found" proves absence:
// Twilio lists a message as soon as the request that created it has
// returned, queued or not (see outbox.AuthoritativeLister).
func (c *Client) AuthoritativeListing() bool { return true }

// addresses returns the To and From addresses for a sender number ("":
// the client's) and a channel address.
func (c *Client) addresses(sender, to string) (string, string) {
	_, from := splitAddress(cmp.Or(sender, c.from))
	if ch, _ := splitAddress(to); ch != "" {
		return to, ch + ":" + from
	}
	return to, from
}

// service builds a twilio-go Api service for one call. twilio-go creates
// its requests without a context and always for https://api.twilio.com;
// the call's transport (attempt) gives them the call's context, points
// them at the base URL and observes what reached the wire.
func (c *Client) service(ctx context.Context) (*openapi.ApiService, *attempt) {
	at := &attempt{ctx: ctx, next: c.transport, base: c.base}
	tc := &twclient.Client{
		Credentials: twclient.NewCredentials(c.accountSID, c.authToken),
		HTTPClient: &http.Client{
			Transport: at,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
	tc.SetAccountSid(c.accountSID)
	rh := twclient.NewRequestHandler(tc)
	if c.base != nil {
		rh.Edge, rh.Region = "", "" // TWILIO_EDGE/TWILIO_REGION must not redirect a test
	}
	return openapi.NewApiService(rh), at
}

// attempt is the http.RoundTripper of one call.
type attempt struct {
	ctx  context.Context
	next http.RoundTripper
	base *url.URL

	wrote  atomic.Bool  // a request was written completely
	status atomic.Int32 // status of the last answer

	mu     sync.Mutex
	bodies []io.Closer
}

func (a *attempt) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := httptrace.WithClientTrace(a.ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				a.wrote.Store(true)
			}
		},
	})
	out := req.Clone(ctx)
	if a.base != nil {
		out.URL.Scheme, out.URL.Host, out.Host = a.base.Scheme, a.base.Host, a.base.Host
		if a.base.Path != "" {
			out.URL.Path, out.URL.RawPath = a.base.Path+out.URL.Path, ""
		}
	}
	resp, err := a.next.RoundTrip(out)
	if resp != nil {
		a.status.Store(int32(resp.StatusCode))
		a.mu.Lock()
		a.bodies = append(a.bodies, resp.Body)
		a.mu.Unlock()
	}
	return resp, err
}

// close closes every response body of the call (twilio-go leaves error
// bodies open).
func (a *attempt) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.bodies {
		_ = b.Close()
	}
	a.bodies = nil
}

func (a *attempt) lastStatus() int { return int(a.status.Load()) }

// classify turns a twilio-go error into an *Error by what reached Twilio
// and what came back. Only Twilio's own error document with a Twilio
// error code proves what Twilio did with the request; any other answer
// (a bare status, an HTML page, JSON without a code) may come from a
// proxy or load balancer after Twilio accepted the message, so it is an
// unknown outcome whatever its status.
func (a *attempt) classify(op string, err error) *Error {
	status := a.lastStatus()
	switch code := twilioCode(err); {
	case status == 0 && !a.wrote.Load():
		// Nothing reached Twilio: refused connection, DNS, credentials
		// twilio-go rejects locally, a context that ended first.
		return &Error{Op: op, Outcome: Retryable, Code: code, Err: err}
	case status >= 300 && code != 0:
		return &Error{Op: op, Outcome: byTwilioError(status), Status: status, Code: code, Err: err}
	default:
		// Written, and no answer that proves anything: a timeout, a
		// dropped connection, an unreadable success, a gateway's error.
		return &Error{Op: op, Outcome: Unknown, Status: status, Err: err}
	}
}

// twilioCode is the Twilio error code of err's error document, 0 if err
// carries none (twilio-go decodes any JSON error body into a
// TwilioRestError, so a code of 0 is no Twilio error document).
func twilioCode(err error) int {
	var rest *twclient.TwilioRestError
	if errors.As(err, &rest) {
		return rest.Code
	}
	var v1 *twclient.RestErrorV1
	if errors.As(err, &v1) {
		return v1.Code
	}
	return 0
}

// byTwilioError classifies the HTTP status of Twilio's own error
// document. Twilio keeps no idempotency keys and promises no rollback, so
// it differs from outcome.OfStatus in two ways: a 503 (and a credentials
// or account error) with Twilio's document proves the request was turned
// away, and any other 5xx may come after the message was created.
func byTwilioError(status int) Outcome {
	switch {
	case status == http.StatusServiceUnavailable:
		// Twilio turned the request away before taking it.
		return Retryable
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusNotFound:
		// Credentials or account: nothing was created and the message is
		// fine; it can go once the configuration is fixed.
		return Retryable
	case status >= 500:
		// 500, 502, 504 even from Twilio itself: it may have created the
		// message before failing.
		return Unknown
	}
	// 429: not taken yet; other 4xx: refused for good.
	return outcome.OfStatus(status)
}
