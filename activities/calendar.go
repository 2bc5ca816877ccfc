package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/calendar"
)

// Error types of application errors raised by calendar activities; the
// workflow switches on them.
const (
	ErrTypeSlotUnavailable = "SlotUnavailable"
	ErrTypeCalendarFinal   = "CalendarRejected"
)

// Activities holds the clients the side effects use.
type Activities struct {
	// Calendar returns the calendar client of a tenant.
	Calendar func(tenant string) (*calendar.Client, error)
}

// HoldSlotInput asks for a hold of one slot.
type HoldSlotInput struct {
	Tenant     string    `json:"tenant"`
	Reference  string    `json:"reference"`
	ResourceID string    `json:"resource_id,omitempty"`
	Service    string    `json:"service"`
	Customer   string    `json:"customer"`
	Start      time.Time `json:"start"`
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
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return HoldSlotResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	key := KeyOf(ctx)
	h, err := c.CreateHold(ctx, key, calendar.HoldRequest{
		ResourceID: in.ResourceID, Service: in.Service, Start: in.Start, Customer: in.Customer, Reference: in.Reference,
	})
	if err != nil {
		return HoldSlotResult{}, calendarError("hold slot", err)
	}
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
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return ConfirmHoldResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	key := KeyOf(ctx)
	b, err := c.ConfirmHold(ctx, key, in.HoldID)
	if err != nil {
		return ConfirmHoldResult{}, calendarError("confirm hold", err)
	}
	return ConfirmHoldResult{Step: stepOf(ctx, key, b.ID), Booking: b}, nil
}

// ReleaseHoldInput names the hold to release.
type ReleaseHoldInput struct {
	Tenant string `json:"tenant"`
	HoldID string `json:"hold_id"`
}

// ReleaseHold is the compensation of HoldSlot. Released or expired already
// counts as success, so running it twice is harmless.
func (a *Activities) ReleaseHold(ctx context.Context, in ReleaseHoldInput) (Step, error) {
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return Step{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	key := KeyOf(ctx)
	h, err := c.ReleaseHold(ctx, key, in.HoldID)
	if err != nil {
		return Step{}, calendarError("release hold", err)
	}
	return stepOf(ctx, key, h.ID), nil
}

// calendarError maps a client error to Temporal's retry semantics: final
// answers stop retrying; retryable and unknown outcomes retry with the same
// key, which the calendar replays.
func calendarError(op string, err error) error {
	var ce *calendar.Error
	if !errors.As(err, &ce) || ce.Outcome != calendar.Final {
		return fmt.Errorf("%s: %w", op, err)
	}
	if ce.Code == calendar.CodeSlotUnavailable {
		return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeSlotUnavailable, err, ce.Alternatives)
	}
	return temporal.NewNonRetryableApplicationError(ce.Error(), ErrTypeCalendarFinal, err, ce.Code)
}
