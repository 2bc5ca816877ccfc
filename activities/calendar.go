package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/shopcal"
)

// Error types of application errors raised by calendar activities; the
// workflow switches on them.
const (
	ErrTypeSlotUnavailable = "SlotUnavailable"
	ErrTypeCalendarFinal   = "CalendarRejected"
	// ErrTypeHoldExpired: the hold lapsed before confirmation.
	ErrTypeHoldExpired = "HoldExpired"
	// ErrTypeAlreadyBooked: the customer already has an active reservation
	// of the service at an overlapping time under another reference (the
	// front desk booked it by hand); its details are an ExistingBooking.
	ErrTypeAlreadyBooked = "AlreadyBooked"
)

// ExistingBooking names the reservation an AlreadyBooked refusal
// protects, so the saga can link it instead of booking again.
type ExistingBooking struct {
	HoldID    string    `json:"hold_id"`
	BookingID string    `json:"booking_id,omitempty"`
	Reference string    `json:"reference"`
	Status    string    `json:"status"`
	Start     time.Time `json:"start"`
}

// Activities holds the clients the side effects use.
type Activities struct {
	// Calendar returns the calendar client of a tenant.
	Calendar func(tenant string) (*calendar.Client, error)
	// Payments returns the payment gateway of a tenant.
	Payments func(tenant string) (payments.Gateway, error)
	// Messages sends confirmations.
	Messages Messenger
	// Reviews is the human review queue.
	Reviews *review.Store
	// Understanding serves the conversation: extraction and dedup.
	Understanding Understanding
	// PaymentReturnURL is where a payment link's page sends the customer
	// after paying (the Checkout Session's success_url): the gateway's
	// RoutePaid under its public base URL.
	PaymentReturnURL string
	// Temporal signals conversations while one moves from its legacy
	// workflow ID to its keyed one (handover.go).
	Temporal Signaller
	// Consent records STOP and START (package consent).
	Consent *consent.Store
	// ShopCalendars finds the shops' own calendars (shopcal.go); nil:
	// none is written.
	ShopCalendars ShopCalendars
	// ShopMirror mirrors what staff entered in those calendars into
	// bookonce's; HoldSlot re-reads it for the slot first. nil: none.
	ShopMirror *shopcal.Mirror
}

// HoldSlotInput asks for a hold of one slot.
type HoldSlotInput struct {
	Tenant     string    `json:"tenant"`
	Reference  string    `json:"reference"`
	ResourceID string    `json:"resource_id,omitempty"`
	Service    string    `json:"service"`
	Customer   string    `json:"customer"`
	Start      time.Time `json:"start"`
	// DeliberateSecond asks for a second reservation of the customer for the
	// service at this time (a reviewer's "separate", a second car).
	DeliberateSecond bool `json:"deliberate_second,omitempty"`
	// TTL is how long the hold lives unconfirmed; zero is the calendar's
	// default. A payment link's hold lives as long as the link.
	TTL time.Duration `json:"ttl,omitempty"`
}

// HoldSlotResult is the hold and the step record.
type HoldSlotResult struct {
	Step Step          `json:"step"`
	Hold calendar.Hold `json:"hold"`
}

// HoldSlot places a hold in the calendar. The workflow ID travels as the
// hold's reference, so even a reset workflow (new run ID, new key) finds
// its own hold instead of taking a second slot.
func (a *Activities) HoldSlot(ctx context.Context, in HoldSlotInput) (HoldSlotResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return HoldSlotResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	if err := a.recheckShopCalendars(ctx, in); err != nil {
		return HoldSlotResult{}, err
	}
	key := KeyOf(ctx)
	h, err := c.CreateHold(ctx, key, calendar.HoldRequest{
		ResourceID: in.ResourceID, Service: in.Service, Start: in.Start, Customer: in.Customer, Reference: in.Reference,
		DeliberateSecond: in.DeliberateSecond, TTLSeconds: int(in.TTL / time.Second),
	})
	if err != nil {
		return HoldSlotResult{}, calendarError("hold slot", err)
	}
	traceID(ctx, tracing.HoldID, h.ID)
	return HoldSlotResult{Step: stepOf(ctx, key, h.ID), Hold: h}, nil
}

// ConfirmHoldInput names the hold to confirm.
type ConfirmHoldInput struct {
	Tenant string `json:"tenant"`
	HoldID string `json:"hold_id"`
}

// ConfirmHoldResult is the booking and the step record.
type ConfirmHoldResult struct {
	Step    Step             `json:"step"`
	Booking calendar.Booking `json:"booking"`
}

// ConfirmHold turns the hold into a booking.
func (a *Activities) ConfirmHold(ctx context.Context, in ConfirmHoldInput) (ConfirmHoldResult, error) {
	traceBooking(ctx, in.Tenant, "")
	traceID(ctx, tracing.HoldID, in.HoldID)
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return ConfirmHoldResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	key := KeyOf(ctx)
	b, err := c.ConfirmHold(ctx, key, in.HoldID)
	if err != nil {
		return ConfirmHoldResult{}, calendarError("confirm hold", err)
	}
	traceID(ctx, tracing.ReservationID, b.ID)
	return ConfirmHoldResult{Step: stepOf(ctx, key, b.ID), Booking: b}, nil
}

// ReleaseHoldInput names the hold to release: by ID, or, when HoldID is
// empty, every held hold of the reference.
type ReleaseHoldInput struct {
	Tenant    string `json:"tenant"`
	HoldID    string `json:"hold_id,omitempty"`
	Reference string `json:"reference"`
}

// ReleaseHold is the compensation of HoldSlot. It is registered before the
// hold is placed, because a hold whose answer was lost may exist: then it is
// found by the reference. Released or expired already counts as success, so
// running it twice is harmless.
func (a *Activities) ReleaseHold(ctx context.Context, in ReleaseHoldInput) (Step, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	traceID(ctx, tracing.HoldID, in.HoldID)
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return Step{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	ids := []string{in.HoldID}
	if in.HoldID == "" {
		holds, err := c.HoldsByReference(ctx, in.Reference)
		if err != nil {
			return Step{}, calendarError("find holds", err)
		}
		ids = ids[:0]
		for _, h := range holds {
			if h.Status == calendar.HoldHeld {
				ids = append(ids, h.ID)
			}
		}
	}
	var last Step
	for _, id := range ids {
		// One key per hold: the route's fingerprint includes the hold ID.
		key := SubKey(ctx, id)
		h, err := c.ReleaseHold(ctx, key, id)
		if err != nil {
			return Step{}, calendarError("release hold", err)
		}
		last = stepOf(ctx, key, h.ID)
	}
	return last, nil
}

// CancelBookingInput names a booking to cancel: by ID, or, when BookingID
// is empty, the confirmed booking of the reference (if any).
type CancelBookingInput struct {
	Tenant    string `json:"tenant"`
	BookingID string `json:"booking_id,omitempty"`
	Reference string `json:"reference"`
}

// CancelBooking is the compensation of ConfirmHold, registered before the
// confirmation (whose answer may be lost); cancelling a cancelled booking,
// or finding none, is success.
func (a *Activities) CancelBooking(ctx context.Context, in CancelBookingInput) (Step, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return Step{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	key := KeyOf(ctx)
	if in.BookingID == "" {
		holds, err := c.HoldsByReference(ctx, in.Reference)
		if err != nil {
			return Step{}, calendarError("find booking", err)
		}
		for _, h := range holds {
			if h.Status == calendar.HoldConfirmed {
				in.BookingID = h.BookingID
			}
		}
		if in.BookingID == "" {
			return Step{Key: key, Attempt: stepOf(ctx, key, "").Attempt}, nil
		}
	}
	traceID(ctx, tracing.ReservationID, in.BookingID)
	b, err := c.CancelBooking(ctx, key, in.BookingID)
	if err != nil {
		return Step{}, calendarError("cancel booking", err)
	}
	return stepOf(ctx, key, b.ID), nil
}

// FindHoldInput names the reference to reconcile.
type FindHoldInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
}

// FindHoldResult says whether an active hold of the reference exists.
type FindHoldResult struct {
	Found bool          `json:"found"`
	Hold  calendar.Hold `json:"hold"`
}

// FindHold reconciles a hold whose outcome is unknown: the reference finds
// it whatever key placed it.
func (a *Activities) FindHold(ctx context.Context, in FindHoldInput) (FindHoldResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return FindHoldResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	holds, err := c.HoldsByReference(ctx, in.Reference)
	if err != nil {
		return FindHoldResult{}, calendarError("find hold", err)
	}
	for _, h := range holds {
		if h.Status == calendar.HoldHeld || h.Status == calendar.HoldConfirmed {
			return FindHoldResult{Found: true, Hold: h}, nil
		}
	}
	return FindHoldResult{}, nil
}

// calendarError maps a client error to Temporal's retry semantics: final
// answers stop retrying; retryable and unknown outcomes retry with the same
// key, which the calendar replays.
func calendarError(op string, err error) error {
	var ce *calendar.Error
	if !errors.As(err, &ce) || ce.Outcome != outcome.Final {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch ce.Code {
	case calendar.CodeSlotUnavailable:
		return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeSlotUnavailable, err, ce.Alternatives)
	case calendar.CodeHoldExpired:
		return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeHoldExpired, err)
	case calendar.CodeCustomerAlreadyBooked:
		var existing ExistingBooking
		if h, ok := calendar.ExistingOf(err); ok {
			existing = ExistingBooking{HoldID: h.ID, BookingID: h.BookingID, Reference: h.Reference, Status: string(h.Status), Start: h.Start}
		}
		return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeAlreadyBooked, err, existing)
	}
	return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeCalendarFinal, err, ce.Code)
}
