package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
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
	case strings.HasPrefix(id, workflows.AppointmentWorkflowID(c.Tenant, "")):
		return BookingAnswer{WorkflowID: id}, nil
	case strings.HasPrefix(id, "appointment:") || id == "":
		return BookingAnswer{}, errNoBooking
	}
	b, err := calendar.NewClient(s.CalendarURL, c.Token).GetBooking(ctx, id)
	if err != nil {
		if calendar.OutcomeOf(err) == calendar.Final {
			return BookingAnswer{}, errNoBooking
		}
		return BookingAnswer{}, fmt.Errorf("ask the calendar for booking %s (try again): %w", id, err)
	}
	return BookingAnswer{WorkflowID: b.Reference, Service: b.Service, Start: b.Start.In(p.Location).Format(time.RFC3339)}, nil
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
	st, err := workflows.AppointmentStatus(qctx, s.Temporal, a.WorkflowID)
	if err != nil && a.Service == "" {
		return BookingAnswer{}, errNoBooking
	}
	return answer(a, st, err == nil, false), nil
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
