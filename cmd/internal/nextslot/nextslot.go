// Package nextslot finds the next slot a demo booking can take: free in
// the calendar and not overlapping a booking the customer already has. It
// serves the commands that suggest or book one (`make run`'s "Try" line,
// `starter book --start next`), so an example never names a slot that is
// past or taken.
package nextslot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bookonce/bookonce/calendar"
)

// StartNext is the value of starter book's --start that books the next
// free slot.
const StartNext = "next"

// Lead is how far ahead of now the slot starts at the earliest, so it is
// still in the future when someone copies the suggestion and runs it.
const Lead = time.Hour

// window is how far ahead the calendar is asked (it answers at most 31 days).
const window = 14 * 24 * time.Hour

// ErrNone means the calendar has no free slot of the service in the window.
var ErrNone = errors.New("no free slot in the next 14 days")

// Calendar is what Find needs of the calendar API (calendar.Client).
type Calendar interface {
	Availability(ctx context.Context, service, resource string, from, to time.Time) ([]calendar.Slot, error)
	ListBookings(ctx context.Context, customer string) ([]calendar.Booking, error)
}

// Find returns the earliest free slot of service starting at least Lead
// after now that no confirmed booking of customer overlaps (the calendar
// would refuse it as customer_already_booked), in loc.
func Find(ctx context.Context, cal Calendar, service, customer string, now time.Time, loc *time.Location) (calendar.Slot, error) {
	from := now.Add(Lead)
	slots, err := cal.Availability(ctx, service, "", from, from.Add(window))
	if err != nil {
		return calendar.Slot{}, fmt.Errorf("ask the calendar for free slots: %w", err)
	}
	booked, err := cal.ListBookings(ctx, customer)
	if err != nil {
		return calendar.Slot{}, fmt.Errorf("list the customer's bookings: %w", err)
	}
	var best calendar.Slot
	for _, s := range slots {
		if s.Start.Before(from) || overlapsAny(s, booked) {
			continue
		}
		if best.Start.IsZero() || s.Start.Before(best.Start) {
			best = s
		}
	}
	if best.Start.IsZero() {
		return calendar.Slot{}, ErrNone
	}
	best.Start, best.End = best.Start.In(loc), best.End.In(loc)
	return best, nil
}

func overlapsAny(s calendar.Slot, booked []calendar.Booking) bool {
	for _, b := range booked {
		if b.Status == calendar.BookingConfirmed && s.Start.Before(b.End) && b.Start.Before(s.End) {
			return true
		}
	}
	return false
}
