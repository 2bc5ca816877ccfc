// Package calendar is bookonce's calendar API: resources with opening
// hours, services with durations, holds that expire and confirm into
// bookings. Every mutating route honours the Idempotency-Key contract, and
// PostgreSQL constraints forbid overlapping reservations of one resource and
// two active reservations for one business reference.
package calendar

import "time"

// HoldStatus is the state of a hold.
type HoldStatus string

// Hold states. A confirmed hold has become a booking.
const (
	HoldHeld      HoldStatus = "held"
	HoldConfirmed HoldStatus = "confirmed"
	HoldReleased  HoldStatus = "released"
	HoldExpired   HoldStatus = "expired"
)

// BookingStatus is the state of a booking.
type BookingStatus string

// Booking states.
const (
	BookingConfirmed BookingStatus = "confirmed"
	BookingCancelled BookingStatus = "cancelled"
)

// Problem codes the API answers with (the last segment of the problem type).
const (
	CodeSlotUnavailable     = "slot_unavailable"
	CodeReferenceConflict   = "reference_conflict"
	CodeOutsideOpeningHours = "outside_opening_hours"
	CodeUnknownResource     = "unknown_resource"
	CodeUnknownService      = "unknown_service"
	CodeNotFound            = "not_found"
	CodeInvalidRequest      = "invalid_request"
	CodeHoldExpired         = "hold_expired"
	CodeInvalidState        = "invalid_state"
	// CodeCustomerAlreadyBooked: the customer already has an active
	// reservation (hold or booking) of the service at an overlapping time,
	// under any reference; the problem's "existing" names it.
	CodeCustomerAlreadyBooked = "customer_already_booked"
)

// HoldRequest is the body of POST /v1/holds.
type HoldRequest struct {
	// ResourceID is optional: when empty the first free resource is taken.
	ResourceID string    `json:"resource_id,omitempty"`
	Service    string    `json:"service"`
	Start      time.Time `json:"start"`
	Customer   string    `json:"customer"`
	// Reference is the caller's business reference (the booking workflow ID).
	Reference string `json:"reference"`
	// DeliberateSecond marks a wished second reservation of the customer for
	// the same service at an overlapping time (a reviewer decided
	// "separate", or the customer asked for a second car); without it the
	// calendar refuses with customer_already_booked.
	DeliberateSecond bool `json:"deliberate_second,omitempty"`
	// TTLSeconds is how long the hold lives unconfirmed, MinHoldTTL to
	// MaxHoldTTL; 0 (absent) is the server's HoldTTL. A booking paid
	// through a payment link holds its slot as long as the link lives.
	TTLSeconds int `json:"ttl_seconds,omitempty"`
}

// Bounds of HoldRequest.TTLSeconds.
const (
	MinHoldTTL = time.Minute
	MaxHoldTTL = 24 * time.Hour
)

// Hold is a reservation of a resource for a slot that expires unless confirmed.
type Hold struct {
	ID         string     `json:"id"`
	Object     string     `json:"object"`
	Status     HoldStatus `json:"status"`
	ResourceID string     `json:"resource_id"`
	Service    string     `json:"service"`
	Customer   string     `json:"customer"`
	Reference  string     `json:"reference"`
	Start      time.Time  `json:"start"`
	End        time.Time  `json:"end"`
	ExpiresAt  time.Time  `json:"expires_at"`
	BookingID  string     `json:"booking_id,omitempty"`
	// DeliberateSecond: placed as a deliberate second reservation of the
	// customer for the service at this time.
	DeliberateSecond bool      `json:"deliberate_second,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
}

// Booking is a confirmed appointment.
type Booking struct {
	ID         string        `json:"id"`
	Object     string        `json:"object"`
	Status     BookingStatus `json:"status"`
	HoldID     string        `json:"hold_id"`
	ResourceID string        `json:"resource_id"`
	Service    string        `json:"service"`
	Customer   string        `json:"customer"`
	Reference  string        `json:"reference"`
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	CreatedAt  time.Time     `json:"created_at"`
}

// Slot is a free interval of a resource.
type Slot struct {
	ResourceID string    `json:"resource_id"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
}

// Resource is a bay or technician with opening hours.
type Resource struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Opens    string `json:"opens"`
	Closes   string `json:"closes"`
	Weekdays []int  `json:"weekdays"`
}

// Service is a bookable service with its duration.
type Service struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	DurationMinutes int    `json:"duration_minutes"`
}

// Operation is what an idempotency key did (GET /v1/operations/{key}).
type Operation struct {
	Object       string    `json:"object"`
	Key          string    `json:"idempotency_key"`
	Operation    string    `json:"operation"`
	State        string    `json:"state"`
	StatusCode   int       `json:"status_code,omitempty"`
	ResourceType string    `json:"resource_type,omitempty"`
	ResourceID   string    `json:"resource_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
	Response     rawJSON   `json:"response,omitempty"`
}

// List wraps collections as {"data": [...]}.
type List[T any] struct {
	Data []T `json:"data"`
}

// rawJSON embeds a stored JSON response body verbatim.
type rawJSON []byte

// MarshalJSON returns the stored bytes, or null.
func (r rawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps the bytes.
func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}
