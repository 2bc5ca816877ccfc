package calendar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
)

// Client is a typed client of the calendar API. It always sends the
// idempotency key it is given and never invents one: keys belong to the
// caller's business operation, not to an HTTP attempt.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// NewClient returns a client with a bounded per-request timeout.
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: baseURL, Token: token, HTTP: &http.Client{Timeout: 10 * time.Second, Transport: tracing.Transport(nil)}}
}

// Error is a failed calendar call.
type Error struct {
	Op      string
	Status  int    // 0 when no response arrived
	Code    string // problem code, e.g. slot_unavailable
	Detail  string
	Outcome outcome.Outcome
	// Alternatives are free slots offered with slot_unavailable.
	Alternatives []Slot
	// Existing is the customer's reservation that customer_already_booked
	// protects (another reference's hold or booking).
	Existing *Hold
	Err      error
}

// ErrCustomerAlreadyBooked matches (errors.Is) a final refusal: the
// customer already has an active reservation of the service at an
// overlapping time under another reference; ExistingOf names it.
var ErrCustomerAlreadyBooked = errors.New("calendar: customer already booked for this service and time")

// Is makes errors.Is(err, ErrCustomerAlreadyBooked) see the problem code.
func (e *Error) Is(target error) bool {
	return target == ErrCustomerAlreadyBooked && e.Code == CodeCustomerAlreadyBooked
}

// ExistingOf returns the existing reservation a customer_already_booked
// refusal names.
func ExistingOf(err error) (Hold, bool) {
	var ce *Error
	if errors.As(err, &ce) && ce.Code == CodeCustomerAlreadyBooked && ce.Existing != nil {
		return *ce.Existing, true
	}
	return Hold{}, false
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("calendar %s: %s outcome: %v", e.Op, e.Outcome, e.Err)
	}
	return fmt.Sprintf("calendar %s: %d %s: %s", e.Op, e.Status, e.Code, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Class is the outcome of the failed call (outcome.Classed).
func (e *Error) Class() outcome.Outcome { return e.Outcome }

// CodeOf returns the problem code of err, or "".
func CodeOf(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// CreateHold places a hold. A 200 means the reference already held this
// slot; a 201 a new hold; both return the hold.
func (c *Client) CreateHold(ctx context.Context, key string, req HoldRequest) (Hold, error) {
	var h Hold
	return h, c.do(ctx, "create hold", http.MethodPost, "/v1/holds", key, req, &h)
}

// ConfirmHold turns a hold into a booking.
func (c *Client) ConfirmHold(ctx context.Context, key, holdID string) (Booking, error) {
	var b Booking
	return b, c.do(ctx, "confirm hold", http.MethodPost, "/v1/holds/"+url.PathEscape(holdID)+"/confirm", key, nil, &b)
}

// ReleaseHold releases a hold; releasing a released or expired hold succeeds.
func (c *Client) ReleaseHold(ctx context.Context, key, holdID string) (Hold, error) {
	var h Hold
	return h, c.do(ctx, "release hold", http.MethodPost, "/v1/holds/"+url.PathEscape(holdID)+"/release", key, nil, &h)
}

// CancelBooking cancels a booking; cancelling a cancelled booking succeeds.
func (c *Client) CancelBooking(ctx context.Context, key, bookingID string) (Booking, error) {
	var b Booking
	return b, c.do(ctx, "cancel booking", http.MethodPost, "/v1/bookings/"+url.PathEscape(bookingID)+"/cancel", key, nil, &b)
}

// GetHold reads a hold.
func (c *Client) GetHold(ctx context.Context, id string) (Hold, error) {
	var h Hold
	return h, c.do(ctx, "get hold", http.MethodGet, "/v1/holds/"+url.PathEscape(id), "", nil, &h)
}

// HoldsByReference lists the holds of a business reference, newest first.
func (c *Client) HoldsByReference(ctx context.Context, reference string) ([]Hold, error) {
	var l List[Hold]
	return l.Data, c.do(ctx, "list holds", http.MethodGet, "/v1/holds?reference="+url.QueryEscape(reference), "", nil, &l)
}

// GetBooking reads a booking.
func (c *Client) GetBooking(ctx context.Context, id string) (Booking, error) {
	var b Booking
	return b, c.do(ctx, "get booking", http.MethodGet, "/v1/bookings/"+url.PathEscape(id), "", nil, &b)
}

// ListBookings lists a customer's bookings ("" lists all).
func (c *Client) ListBookings(ctx context.Context, customer string) ([]Booking, error) {
	var l List[Booking]
	return l.Data, c.do(ctx, "list bookings", http.MethodGet, "/v1/bookings?customer="+url.QueryEscape(customer), "", nil, &l)
}

// Availability lists free slots of a service between from and to.
func (c *Client) Availability(ctx context.Context, service, resource string, from, to time.Time) ([]Slot, error) {
	q := url.Values{"service": {service}, "from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}}
	if resource != "" {
		q.Set("resource", resource)
	}
	var l List[Slot]
	return l.Data, c.do(ctx, "availability", http.MethodGet, "/v1/availability?"+q.Encode(), "", nil, &l)
}

// Operation reports what key did under operation (e.g. OpCreateHold). A
// Final error with Code not_found means the key never took effect.
func (c *Client) Operation(ctx context.Context, key, operation string) (Operation, error) {
	var o Operation
	return o, c.do(ctx, "get operation", http.MethodGet,
		"/v1/operations/"+url.PathEscape(key)+"?operation="+url.QueryEscape(operation), "", nil, &o)
}

func (c *Client) do(ctx context.Context, op, method, path, key string, body, out any) error {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &Error{Op: op, Outcome: outcome.Final, Err: fmt.Errorf("encode request: %w", err)}
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rdr)
	if err != nil {
		return &Error{Op: op, Outcome: outcome.Final, Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		class := outcome.Unknown
		if method == http.MethodGet {
			class = outcome.Retryable // reads have no effect to be unsure about
		}
		return &Error{Op: op, Outcome: class, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return &Error{Op: op, Status: resp.StatusCode, Outcome: outcome.Unknown, Err: fmt.Errorf("read response: %w", err)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return &Error{Op: op, Status: resp.StatusCode, Outcome: outcome.Unknown, Err: fmt.Errorf("decode response: %w", err)}
			}
		}
		return nil
	}
	return problemError(op, resp, data)
}

func problemError(op string, resp *http.Response, data []byte) error {
	var p struct {
		Code         string `json:"code"`
		Detail       string `json:"detail"`
		Alternatives []Slot `json:"alternatives"`
		Existing     *Hold  `json:"existing"`
	}
	_ = json.Unmarshal(data, &p)
	e := &Error{Op: op, Status: resp.StatusCode, Code: p.Code, Detail: p.Detail, Alternatives: p.Alternatives, Existing: p.Existing}
	if e.Detail == "" {
		e.Detail = http.StatusText(resp.StatusCode)
	}
	// A key in flight decides nothing yet; every other 409 is the API's
	// decision (slot_unavailable, customer_already_booked, ...).
	e.Outcome = outcome.OfStatus(resp.StatusCode)
	inFlight := resp.StatusCode == http.StatusConflict && p.Code == "idempotency_key_in_flight"
	if inFlight {
		e.Outcome = outcome.Retryable
	}
	if inFlight || resp.StatusCode == http.StatusTooManyRequests {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			e.Detail += fmt.Sprintf(" (retry after %ds)", s)
		}
	}
	return e
}
