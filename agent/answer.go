package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// A waiting tool asks the saga for its state first after firstPoll, then
// twice as long each time up to pollEvery: the hold and the payment link
// usually exist within a few tens of milliseconds, and a voice agent's
// turn should not wait out a fixed 200 ms tick for them, while a booking
// that takes longer costs no more queries than before.
const (
	firstPoll = 10 * time.Millisecond
	pollEvery = 200 * time.Millisecond
)

// await waits, up to the service's bound, until the saga has an answer: an
// end, a person's review, or a payment link the customer must use. found
// is false when the saga could not be read at all (not started yet, or
// Temporal not answering): an unknown, answered as pending.
func (s *Service) await(ctx context.Context, workflowID string) (appointment.State, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.wait())
	defer cancel()
	var last appointment.State
	found := false
	pause := firstPoll
	for {
		st, err := appointment.StatusOf(ctx, s.Temporal, workflowID)
		var nf *serviceerror.NotFound
		switch {
		case err == nil:
			last, found = st, true
			if settled(st) {
				return st, true
			}
		case !errors.As(err, &nf) && ctx.Err() == nil:
			s.Logger.Debug("agent status query", "workflow_id", workflowID, "error", err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, found
		case <-t.C:
		}
		pause = min(2*pause, pollEvery)
	}
}

// settled: the state is worth answering now rather than waiting longer.
func settled(st appointment.State) bool {
	switch st.Status {
	case workflows.StatusConfirmed, workflows.StatusRejected, workflows.StatusPaymentFailed, workflows.StatusCancelled,
		workflows.StatusAlreadyBooked, workflows.StatusNeedsReview:
		return true
	}
	return st.PaymentURL != "" // waiting for the customer to pay
}

// answer turns the saga's state into the tool's answer. merged: the
// intent was booked under another operation (or channel) before.
func answer(a BookingAnswer, st appointment.State, found, merged bool) BookingAnswer {
	a.BookingID = st.BookingID
	handle := fmt.Sprintf("Call get_booking with id %q for the outcome; do not book again.", a.WorkflowID)
	switch {
	case !found:
		a.Status, a.Message = StatusPending, "The booking is under way but its state could not be read yet. "+handle
	case st.Status == workflows.StatusConfirmed && merged:
		a.Status, a.Message = StatusAlreadyBooked, "This appointment was already booked; it was not booked twice."
	case st.Status == workflows.StatusConfirmed:
		a.Status, a.Message = StatusConfirmed, "Booked."
	case st.Status == workflows.StatusAlreadyBooked:
		a.Status, a.ExistingBooking = StatusAlreadyBooked, st.ExistingBooking
		a.Message = "The customer already has this appointment (booked earlier); nothing new was booked or charged."
	case st.Status == workflows.StatusRejected || st.Status == workflows.StatusPaymentFailed || st.Status == workflows.StatusCancelled:
		a.Status, a.Message = StatusRejected, rejection(st)
	case st.Status == workflows.StatusCancelling:
		// Before confirmation: the customer cancelled and the hold and
		// deposit are being released; nothing will stand under it.
		a.Status, a.Message = StatusPending, "This booking is being cancelled; it will not be booked by this call. Once get_booking says it is cancelled, call book_appointment again to book it anew. Call get_booking with id "+strconv.Quote(a.WorkflowID)+" for the outcome."
	case st.Status == workflows.StatusNeedsReview:
		a.Status, a.Message = StatusPending, "The outcome is under review by a person at the business; the customer will be told. "+handle
	case st.PaymentURL != "":
		// Only while the customer has yet to pay: a link of a booking that
		// is paid, cancelled or over must not be read out.
		a.PaymentURL = st.PaymentURL
		a.Status, a.Message = StatusPending, "Held, waiting for the deposit: give the customer payment_url (it was also sent to them). "+handle
	case merged:
		a.Status, a.Message = StatusAlreadyBooked, "This appointment was already requested and is being booked; it will not be booked twice. "+handle
	default:
		a.Status, a.Message = StatusPending, "The booking is still running. "+handle
	}
	return a
}

func rejection(st appointment.State) string {
	msg := "Not booked"
	if st.Reason != "" {
		msg += ": " + st.Reason
	}
	if len(st.Alternatives) > 0 {
		alts := make([]string, 0, len(st.Alternatives))
		for _, t := range st.Alternatives {
			alts = append(alts, t.Format(time.RFC3339))
		}
		msg += ". Free instead: " + strings.Join(alts, ", ")
	}
	return msg + ". Nothing is held or charged; offer another slot (a new operation)."
}

// needsConfirmation names the customer's other appointment close to this
// wish, so the agent asks the human instead of booking a second.
func (s *Service) needsConfirmation(ctx context.Context, p *tenants.Profile, a BookingAnswer, d dedup.Decision) BookingAnswer {
	a.Status = StatusNeedsConfirmation
	a.ExistingBooking = d.ConflictingWorkflow
	if !d.ConflictingSlot.IsZero() {
		a.ExistingStart = d.ConflictingSlot.In(p.Location).Format(time.RFC3339)
	}
	if st, err := appointment.StatusOf(ctx, s.Temporal, d.ConflictingWorkflow); err == nil && st.BookingID != "" {
		a.ExistingBooking = st.BookingID
	}
	a.Message = fmt.Sprintf("The customer already has %s at %s (%s). Ask them whether they want a second appointment; only if they say so, call book_appointment again with confirm_second=true. Nothing was booked.",
		d.ConflictingService, a.ExistingStart, a.ExistingBooking)
	return a
}
