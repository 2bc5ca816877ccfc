package calendar

import (
	"errors"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

func (s *Server) getHold(w http.ResponseWriter, r *http.Request) {
	h, err := getReservation(r.Context(), s.Pool, tenantOf(r), r.PathValue("id"), false)
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no hold "+quote(r.PathValue("id"))))
		return
	} else if err != nil {
		s.internalError(w, r, "get hold", err)
		return
	}
	if h.Status == HoldHeld && !h.ExpiresAt.After(s.now()) {
		h.Status = HoldExpired // lazily expired: report what it is
	}
	web.WriteJSON(w, http.StatusOK, h)
}

// listHolds lists the holds of a business reference, newest first:
// GET /v1/holds?reference=. The saga reconciles by it when a key's outcome
// is unknown.
func (s *Server) listHolds(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "query parameter reference is required"))
		return
	}
	s.writeReservations(w, r, "list holds", `SELECT `+reservationColumns+` FROM calendar_reservations
		WHERE tenant_id = $1 AND reference = $2 ORDER BY created_at DESC, id LIMIT 100`, tenantOf(r), ref)
}

// writeReservations answers the reservations sql selects as a list, with
// holds past their expiry shown as expired (as the saga must read them).
func (s *Server) writeReservations(w http.ResponseWriter, r *http.Request, op, sql string, args ...any) {
	rows, err := s.Pool.Query(r.Context(), sql, args...)
	if err != nil {
		s.internalError(w, r, op, err)
		return
	}
	holds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Hold, error) { return scanReservation(row) })
	if err != nil {
		s.internalError(w, r, op, err)
		return
	}
	now := s.now()
	for i := range holds {
		if holds[i].Status == HoldHeld && !holds[i].ExpiresAt.After(now) {
			holds[i].Status = HoldExpired
		}
	}
	web.WriteJSON(w, http.StatusOK, List[Hold]{Data: nonNil(holds)})
}

func (s *Server) getBooking(w http.ResponseWriter, r *http.Request) {
	h, err := getByBookingID(r.Context(), s.Pool, tenantOf(r), r.PathValue("id"), false)
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no booking "+quote(r.PathValue("id"))))
		return
	} else if err != nil {
		s.internalError(w, r, "get booking", err)
		return
	}
	web.WriteJSON(w, http.StatusOK, bookingOf(h))
}

func (s *Server) listBookings(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sql := `SELECT ` + reservationColumns + ` FROM calendar_reservations WHERE tenant_id = $1 AND booking_id IS NOT NULL`
	args := []any{tenantOf(r)}
	if c := q.Get("customer"); c != "" {
		sql += ` AND customer = $2`
		args = append(args, normaliseCustomer(c, s.Region))
	}
	rows, err := s.Pool.Query(r.Context(), sql+` ORDER BY lower(slot), id LIMIT 500`, args...)
	if err != nil {
		s.internalError(w, r, "list bookings", err)
		return
	}
	holds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Hold, error) { return scanReservation(row) })
	if err != nil {
		s.internalError(w, r, "list bookings", err)
		return
	}
	out := List[Booking]{Data: make([]Booking, 0, len(holds))}
	for _, h := range holds {
		out.Data = append(out.Data, bookingOf(h))
	}
	web.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) listResources(w http.ResponseWriter, r *http.Request) {
	res, err := loadResources(r.Context(), s.Pool, tenantOf(r))
	if err != nil {
		s.internalError(w, r, "list resources", err)
		return
	}
	web.WriteJSON(w, http.StatusOK, List[Resource]{Data: nonNil(res)})
}

func (s *Server) listServices(w http.ResponseWriter, r *http.Request) {
	svcs, err := loadServices(r.Context(), s.Pool, tenantOf(r))
	if err != nil {
		s.internalError(w, r, "list services", err)
		return
	}
	web.WriteJSON(w, http.StatusOK, List[Service]{Data: nonNil(svcs)})
}

// availability lists free slots: GET /v1/availability?service=&resource=&from=&to=.
func (s *Server) availability(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tenant := tenantOf(r)
	var errs []web.FieldError
	from, err := time.Parse(time.RFC3339, q.Get("from"))
	if err != nil {
		errs = append(errs, web.FieldError{Field: "from", Detail: "required, RFC 3339 with a zone"})
	}
	to, err := time.Parse(time.RFC3339, q.Get("to"))
	if err != nil {
		errs = append(errs, web.FieldError{Field: "to", Detail: "required, RFC 3339 with a zone"})
	} else if len(errs) == 0 && (!to.After(from) || to.Sub(from) > 31*24*time.Hour) {
		errs = append(errs, web.FieldError{Field: "to", Detail: "must be after from and at most 31 days later"})
	}
	if q.Get("service") == "" {
		errs = append(errs, web.FieldError{Field: "service", Detail: "required"})
	}
	if len(errs) > 0 {
		p := web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "invalid availability query")
		p.Errors = errs
		web.WriteProblem(w, p)
		return
	}
	svc, err := loadService(r.Context(), s.Pool, tenant, q.Get("service"))
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, CodeUnknownService, "unknown service "+quote(q.Get("service"))))
		return
	} else if err != nil {
		s.internalError(w, r, "availability", err)
		return
	}
	resources, err := loadResources(r.Context(), s.Pool, tenant)
	if err != nil {
		s.internalError(w, r, "availability", err)
		return
	}
	out := List[Slot]{Data: []Slot{}}
	found := false
	for _, res := range resources {
		if rid := q.Get("resource"); rid != "" && rid != res.ID {
			continue
		}
		found = true
		b, err := busy(r.Context(), s.Pool, tenant, res.ID, from, to, s.now())
		if err != nil {
			s.internalError(w, r, "availability", err)
			return
		}
		out.Data = append(out.Data, freeSlots(res, b, from, to, minutes(svc.DurationMinutes), 30*time.Minute, s.zone(tenant), 200)...)
	}
	if !found {
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, CodeUnknownResource, "unknown resource "+quote(q.Get("resource"))))
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}

// getOperation reports what an idempotency key did, for reconciliation
// after an unknown outcome: GET /v1/operations/{key}?operation=POST /v1/holds.
func (s *Server) getOperation(w http.ResponseWriter, r *http.Request) {
	op := r.URL.Query().Get("operation")
	if op == "" {
		op = OpCreateHold
	}
	rec, err := s.Idempotency.Lookup(r.Context(), tenantOf(r), op, r.PathValue("key"))
	if errors.Is(err, idempotency.ErrNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no operation "+op+" with this key"))
		return
	} else if err != nil {
		s.internalError(w, r, "get operation", err)
		return
	}
	web.WriteJSON(w, http.StatusOK, Operation{
		Object: "operation", Key: rec.Key, Operation: rec.Operation, State: rec.State, StatusCode: rec.StatusCode,
		ResourceType: rec.ResourceType, ResourceID: rec.ResourceID, CreatedAt: rec.CreatedAt.UTC(), ExpiresAt: rec.ExpiresAt.UTC(),
		Response: rawJSON(rec.Body),
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
