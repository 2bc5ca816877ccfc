package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// errNoBooking: nothing of this tenant under that ID (another tenant's is
// not told apart, so IDs cannot be probed).
var errNoBooking = errors.New("no booking with this id: pass a workflow_id (appointment:…) or booking_id (bk_…) a booking tool returned")

// lookupWait bounds reading one booking's state.
const lookupWait = 3 * time.Second

// GetBooking reports a booking's state by workflow or booking ID. It only
// reads, so an agent may call it as often as it likes.
func (s *Service) GetBooking(ctx context.Context, c Caller, in GetBookingInput) (BookingAnswer, error) {
	p, err := s.profile(c)
	if err != nil {
		return BookingAnswer{}, err
	}
	a, err := s.resolve(ctx, c, p, in.ID)
	if err != nil {
		return BookingAnswer{}, err
	}
	return s.describe(ctx, c.Tenant, p, a)
}

// resolve finds the caller's appointment by workflow or booking ID;
// another tenant's is not told apart from none.
func (s *Service) resolve(ctx context.Context, c Caller, p *tenants.Profile, raw string) (BookingAnswer, error) {
	id := strings.TrimSpace(raw)
	switch {
	case reference.IsAppointmentOf(c.Tenant, id):
		return BookingAnswer{WorkflowID: id}, nil
	case reference.Reserved(id) || id == "":
		return BookingAnswer{}, errNoBooking
	}
	b, err := calendar.NewClient(s.CalendarURL, c.Token).GetBooking(ctx, id)
	if err != nil {
		if outcome.Of(err) == outcome.Final {
			return BookingAnswer{}, errNoBooking
		}
		return BookingAnswer{}, fmt.Errorf("ask the calendar for booking %s (try again): %w", id, err)
	}
	// The booking is the caller's (the calendar answers only its own), but
	// its reference is a string the caller stored: it leads to a workflow
	// only inside the caller's namespace (a move's reference to the
	// appointment it moves), never to another tenant's booking.
	saga := reference.SagaOf(b.Reference)
	if !reference.IsAppointmentOf(c.Tenant, saga) {
		return BookingAnswer{}, errNoBooking
	}
	return BookingAnswer{WorkflowID: saga, Service: b.Service, Start: b.Start.In(p.Location).Format(time.RFC3339)}, nil
}

// describe fills a's state from the saga (and service and slot from the
// intent when not known yet).
func (s *Service) describe(ctx context.Context, tenant string, p *tenants.Profile, a BookingAnswer) (BookingAnswer, error) {
	if a.Service == "" {
		var slot time.Time
		err := s.Pool.QueryRow(ctx, `SELECT service, slot_start FROM booking_intents WHERE tenant_id = $1 AND workflow_id = $2`,
			tenant, a.WorkflowID).Scan(&a.Service, &slot)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return BookingAnswer{}, fmt.Errorf("read booking %s: %w", a.WorkflowID, err)
		}
		if err == nil {
			a.Start = slot.In(p.Location).Format(time.RFC3339)
		}
	}
	qctx, cancel := context.WithTimeout(ctx, lookupWait)
	defer cancel()
	st, err := appointment.StatusOf(qctx, s.Temporal, a.WorkflowID)
	if err != nil && a.Service == "" {
		return BookingAnswer{}, errNoBooking
	}
	a = answer(a, st, err == nil, false)
	if err != nil || st.Status != workflows.StatusConfirmed {
		return a, nil
	}
	now, err := workflows.ConfirmedNow(qctx, s.Temporal, a.WorkflowID)
	if err != nil {
		return BookingAnswer{}, fmt.Errorf("read the lifecycle of %s (try again): %w", a.WorkflowID, err)
	}
	return afterConfirmation(a, now, p), nil
}

// afterConfirmation is a confirmed booking's answer as its lifecycle has
// it now: moved, cancelled, no-show or passed are known there only.
func afterConfirmation(a BookingAnswer, now workflows.BookingNow, p *tenants.Profile) BookingAnswer {
	if !now.Slot.IsZero() {
		a.Start = now.Slot.In(p.Location).Format(time.RFC3339)
	}
	switch now.Status {
	case workflows.StatusCancelled:
		a.Status, a.Message = StatusCancelled, "This booking is cancelled; nothing stands at this time. To book it again, call book_appointment: that is a new booking."
	case workflows.StatusCancelling:
		a.Status, a.Message = StatusPending, "This booking is being cancelled. Call get_booking again for the outcome."
	case workflows.StatusNoShow:
		a.Status, a.Message = StatusNoShow, "The customer did not come to this appointment; the deposit was kept."
	case workflows.StatusCompleted:
		a.Status, a.Message = StatusCompleted, "This appointment has taken place."
	case workflows.StatusNeedsReview:
		a.Status, a.Message = StatusPending, "A change to this booking is under review by a person at the business; the customer will be told."
	}
	return a
}

// maxListed bounds list_bookings (each is a state query).
const maxListed = 20

// ListBookings lists a customer's upcoming appointments (booked or under
// way) with their state.
func (s *Service) ListBookings(ctx context.Context, c Caller, in ListBookingsInput) (ListBookingsOutput, error) {
	p, err := s.profile(c)
	if err != nil {
		return ListBookingsOutput{}, err
	}
	cust, err := customer(in.Customer)
	if err != nil {
		return ListBookingsOutput{}, err
	}
	booked, err := s.Dedup.Upcoming(ctx, c.Tenant, cust)
	if err != nil {
		return ListBookingsOutput{}, err
	}
	out := ListBookingsOutput{Bookings: []BookingAnswer{}}
	for i, b := range booked {
		if i == maxListed {
			break
		}
		a, err := s.describe(ctx, c.Tenant, p, BookingAnswer{WorkflowID: b.WorkflowID, Service: b.Service, Start: b.SlotStart.In(p.Location).Format(time.RFC3339)})
		if err != nil {
			return ListBookingsOutput{}, err
		}
		out.Bookings = append(out.Bookings, a)
	}
	return out, nil
}

// errReschedule: moving bookings is a later step of the lifecycle.
var errReschedule = errors.New("not available yet: moving a booking through the tools comes later. Nothing was changed; to move it, cancel_booking and book_appointment the new time, or tell the customer the business will handle it")

// RescheduleBooking answers that it is not available yet.
func (s *Service) RescheduleBooking(context.Context, Caller, ChangeInput) (ChangeOutput, error) {
	return ChangeOutput{}, errReschedule
}
