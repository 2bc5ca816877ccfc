package calendar

import (
	"errors"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// lockHold expires lapsed holds and locks the hold named in the path, in
// the request's transaction; false means the answer was written.
func (s *Server) lockHold(w http.ResponseWriter, r *http.Request, op string) (Hold, pgx.Tx, string, time.Time, bool) {
	ctx := r.Context()
	tx, _ := idempotency.Tx(ctx)
	tenant, now := tenantOf(r), s.now()
	if err := expireHolds(ctx, tx, tenant, now); err != nil {
		s.internalError(w, r, op, err)
		return Hold{}, nil, "", now, false
	}
	h, err := getReservation(ctx, tx, tenant, r.PathValue("id"), true)
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no hold "+quote(r.PathValue("id"))))
		return Hold{}, nil, "", now, false
	} else if err != nil {
		s.internalError(w, r, op, err)
		return Hold{}, nil, "", now, false
	}
	return h, tx, tenant, now, true
}

// confirmHold turns a hold into a booking. Confirming an already confirmed
// hold answers the booking again (a retry with a new key is harmless).
func (s *Server) confirmHold(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	h, tx, tenant, now, ok := s.lockHold(w, r, "confirm hold")
	if !ok {
		return
	}
	switch h.Status {
	case HoldConfirmed:
		idempotency.SetResource(ctx, "booking", h.BookingID)
		web.WriteJSON(w, http.StatusOK, bookingOf(h))
	case HoldHeld:
		h.BookingID = newID("bk_")
		if err := setStatus(ctx, tx, tenant, h.ID, HoldConfirmed, h.BookingID, now); err != nil {
			s.internalError(w, r, "confirm hold", err)
			return
		}
		h.Status = HoldConfirmed
		idempotency.SetResource(ctx, "booking", h.BookingID)
		w.Header().Set("Location", "/v1/bookings/"+h.BookingID)
		web.WriteJSON(w, http.StatusCreated, bookingOf(h))
	case HoldExpired:
		final(ctx, w, web.NewProblem(http.StatusConflict, CodeHoldExpired, "hold "+h.ID+" expired at "+h.ExpiresAt.Format("15:04:05Z07:00")+"; place a new hold"))
	default:
		final(ctx, w, web.NewProblem(http.StatusConflict, CodeInvalidState, "hold "+h.ID+" is "+string(h.Status)+" and cannot be confirmed"))
	}
}

// releaseHold gives a held slot back. Releasing something already
// released or expired answers 200 with its state: a compensation may run
// twice. A confirmed hold is not released; cancel the booking instead.
func (s *Server) releaseHold(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	h, tx, tenant, now, ok := s.lockHold(w, r, "release hold")
	if !ok {
		return
	}
	switch h.Status {
	case HoldHeld:
		if err := setStatus(ctx, tx, tenant, h.ID, HoldReleased, "", now); err != nil {
			s.internalError(w, r, "release hold", err)
			return
		}
		h.Status = HoldReleased
	case HoldConfirmed:
		final(ctx, w, web.NewProblem(http.StatusConflict, CodeInvalidState, "hold "+h.ID+" is confirmed as booking "+h.BookingID+"; cancel the booking instead"))
		return
	}
	idempotency.SetResource(ctx, "hold", h.ID)
	web.WriteJSON(w, http.StatusOK, h)
}

// cancelBooking cancels a booking; cancelling a cancelled booking answers
// 200 with its state.
func (s *Server) cancelBooking(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, _ := idempotency.Tx(ctx)
	tenant := tenantOf(r)
	h, err := getByBookingID(ctx, tx, tenant, r.PathValue("id"), true)
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no booking "+quote(r.PathValue("id"))))
		return
	} else if err != nil {
		s.internalError(w, r, "cancel booking", err)
		return
	}
	if h.Status == HoldConfirmed {
		if err := setStatus(ctx, tx, tenant, h.ID, HoldStatus("cancelled"), "", s.now()); err != nil {
			s.internalError(w, r, "cancel booking", err)
			return
		}
		h.Status = "cancelled"
	}
	idempotency.SetResource(ctx, "booking", h.BookingID)
	web.WriteJSON(w, http.StatusOK, bookingOf(h))
}
