package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/shopcal"
)

// ErrTypeShopCalendarFinal: the shop's calendar refused the write for
// good (credentials, a calendar that is gone, a secret not configured): a
// person must reconnect it; retrying changes nothing.
const ErrTypeShopCalendarFinal = "ShopCalendarFinal"

// ShopCalendars finds the shop's own calendar of a resource; ok is false
// when the resource has none (package shopcal, tenants.yaml
// resources[].calendar). Resource "" asks whether any resource of the
// tenant has one (ok; p is then nil).
type ShopCalendars func(tenant, resource string) (p shopcal.Provider, ok bool, err error)

// shopRecheckTimeout bounds one re-read of the shops' calendars before a
// hold: a calendar that hangs does not keep a customer waiting long.
const shopRecheckTimeout = 5 * time.Second

// shopRecheckPatience is how long, from the hold step's first attempt, a
// hold waits for a re-read that fails for now (a provider down, a lost
// answer): a stale mirror is no proof the slot is free, so the step is
// retried. After it, the hold goes on with the mirror's last view, and
// the sweep's conflict check stands behind it: a provider that is down
// for long does not stop the shop's bookings.
const shopRecheckPatience = 30 * time.Second

// recheckShopCalendars re-reads, just before a hold, the shop's calendars
// the hold may take, so a slot staff took a moment ago is refused
// (shopcal.Mirror.BeforeHold). A re-read that fails for now is a
// retryable error of the step within shopRecheckPatience; one that fails
// for good (consent withdrawn: a calendar_connection case) is logged and
// the hold goes on.
func (a *Activities) recheckShopCalendars(ctx context.Context, in HoldSlotInput) error {
	if a.ShopMirror == nil {
		return nil
	}
	err := a.ShopMirror.BeforeHold(ctx, in.Tenant, in.ResourceID, in.Start, shopRecheckTimeout)
	if err == nil {
		return nil
	}
	if outcome.Of(err) != outcome.Final && time.Since(activity.GetInfo(ctx).ScheduledTime) < shopRecheckPatience {
		return fmt.Errorf("the shop's calendar was not re-read before the hold: %w", err)
	}
	activity.GetLogger(ctx).Warn("shop calendar not re-read before the hold; the mirror's last view stands", "err", err)
	return nil
}

// ShopCalendarInput names a booking whose event in the shop's calendar is
// to follow it. Reference is the booking's lifecycle reference (the
// appointment's workflow ID): the event's identity, the same across
// moves, whose calendar bookings each have an ID of their own.
type ShopCalendarInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
	BookingID string `json:"booking_id"`
}

// SyncShopCalendar makes the shop's calendar of the booking's resource
// show what bookonce's calendar, the system of record, holds: the event at
// the booking's slot while it is confirmed, none once it is cancelled
// (shopcal.Put, shopcal.Remove, under the event ID derived from the
// reference: safe to repeat after any failure). A resource without a
// calendar of the shop's is nothing to do (written false). A refusal no
// retry changes is a non-retryable error of type ErrTypeShopCalendarFinal.
func (a *Activities) SyncShopCalendar(ctx context.Context, in ShopCalendarInput) (written bool, err error) {
	if a.ShopCalendars == nil {
		return false, nil
	}
	// Most shops connect no calendar: they cost no read of the booking.
	if _, has, err := a.ShopCalendars(in.Tenant, ""); err == nil && !has {
		return false, nil
	}
	c, err := a.Calendar(in.Tenant)
	if err != nil {
		return false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	bk, err := c.GetBooking(ctx, in.BookingID)
	if err != nil {
		return false, calendarError("read booking", err)
	}
	p, ok, err := a.ShopCalendars(in.Tenant, bk.ResourceID)
	if err != nil {
		return false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeShopCalendarFinal, err)
	}
	if !ok {
		return false, nil
	}
	id := shopcal.EventID(in.Tenant, in.Reference)
	if bk.Status == calendar.BookingConfirmed {
		err = shopcal.Put(ctx, p, shopcal.Event{ID: id, Start: bk.Start, End: bk.End,
			Summary: bk.Service + " – " + mask.Phones(bk.Customer), Description: "bookonce booking " + in.Reference})
	} else {
		err = shopcal.Remove(ctx, p, id)
	}
	if outcome.Of(err) == outcome.Final {
		return false, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeShopCalendarFinal, err)
	}
	if err != nil {
		return false, fmt.Errorf("shop calendar of %s/%s: %w", in.Tenant, bk.ResourceID, err)
	}
	return true, nil
}
