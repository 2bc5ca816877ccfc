package calendar

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/reference"
)

func (s *Server) createHold(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := idempotency.Tx(ctx)
	if !ok {
		s.internalError(w, r, "create hold", errors.New("no idempotency transaction"))
		return
	}
	tenant := tenantOf(r)
	var req HoldRequest
	if p := decodeStrict(r, &req); p != nil {
		web.WriteProblem(w, p)
		return
	}
	if p := validateHold(req); p != nil {
		web.WriteProblem(w, p)
		return
	}
	if err := reference.CheckStored(tenant, req.Reference); err != nil {
		p := web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "the reference is not this tenant's")
		p.Errors = []web.FieldError{{Field: "reference", Detail: err.Error()}}
		web.WriteProblem(w, p)
		return
	}
	req.Customer = normaliseCustomer(req.Customer, s.Region)
	svc, err := loadService(ctx, tx, tenant, req.Service)
	if errors.Is(err, errNotFound) {
		web.WriteProblem(w, web.NewProblem(http.StatusUnprocessableEntity, CodeUnknownService, "unknown service "+quote(req.Service)+"; GET /v1/services lists them"))
		return
	} else if err != nil {
		s.internalError(w, r, "load service", err)
		return
	}
	resources, err := loadResources(ctx, tx, tenant)
	if err != nil {
		s.internalError(w, r, "load resources", err)
		return
	}
	candidates, p := s.candidates(tenant, resources, req, svc)
	if p != nil {
		web.WriteProblem(w, p)
		return
	}

	if err := expireHolds(ctx, tx, tenant, s.now()); err != nil {
		s.internalError(w, r, "create hold", err)
		return
	}
	start := req.Start.UTC()
	end := start.Add(minutes(svc.DurationMinutes))
	// The business reference guards callers whose key changed (a reset or
	// retried workflow): same slot returns the existing hold, another slot
	// is a conflict.
	if existing, err := activeByReference(ctx, tx, tenant, req.Reference); err == nil {
		s.answerExisting(w, r, existing, req, start)
		return
	} else if !errors.Is(err, errNotFound) {
		s.internalError(w, r, "look up reference", err)
		return
	}
	s.placeHold(w, r, tx, tenant, req, svc, candidates, start, end)
}

// placeHold inserts the hold on the first candidate the database accepts.
// The constraints decide: the slot taken on a resource moves on to the
// next; the customer already booked for this service at this time is
// refused at once, since no other resource changes that.
func (s *Server) placeHold(w http.ResponseWriter, r *http.Request, tx pgx.Tx, tenant string, req HoldRequest, svc Service, candidates []Resource, start, end time.Time) {
	ctx, now := r.Context(), s.now()
	if err := lockCustomer(ctx, tx, tenant, req.Customer); err != nil {
		s.internalError(w, r, "create hold", err)
		return
	}
	for _, res := range candidates {
		// What staff entered in the shop's calendar takes the slot as a
		// reservation would (the mirror keeps it; the hold step refreshed
		// it for this slot just before).
		if b, err := blocked(ctx, tx, tenant, res.ID, start, end); err != nil {
			s.internalError(w, r, "create hold", err)
			return
		} else if b {
			continue
		}
		h := Hold{
			ID: newID("hold_"), Object: "hold", Status: HoldHeld, ResourceID: res.ID, Service: svc.ID,
			Customer: req.Customer, Reference: req.Reference, Start: start, End: end,
			ExpiresAt: now.Add(s.holdTTL(req)), DeliberateSecond: req.DeliberateSecond, CreatedAt: now,
		}
		err := insertHold(ctx, tx, tenant, h)
		if err == nil {
			idempotency.SetResource(ctx, "hold", h.ID)
			w.Header().Set("Location", "/v1/holds/"+h.ID)
			web.WriteJSON(w, http.StatusCreated, h)
			return
		}
		switch code, name := constraintViolation(err); {
		case code == "23P01" && name == constraintCustomerDoubleBooking:
			if !s.refuseDoubleBooking(w, r, tx, tenant, h) {
				// Released since the constraint fired: a retry runs anew.
				s.internalError(w, r, "create hold", err)
			}
			return
		case code == "23P01": // exclusion: the slot is taken on this resource
			continue
		case code == "23505" && name == "calendar_reservations_active_reference":
			// A concurrent request with another key won the reference.
			if existing, err := activeByReference(ctx, tx, tenant, req.Reference); err == nil {
				s.answerExisting(w, r, existing, req, start)
				return
			}
			s.internalError(w, r, "create hold", err)
			return
		default:
			s.internalError(w, r, "insert hold", err)
			return
		}
	}
	// Every candidate is taken; if by this very customer for this service,
	// that is the answer the caller needs, not alternatives.
	probe := Hold{Customer: req.Customer, Service: svc.ID, Start: start, End: end}
	if !req.DeliberateSecond && s.refuseDoubleBooking(w, r, tx, tenant, probe) {
		return
	}
	p := web.NewProblem(http.StatusConflict, CodeSlotUnavailable, "the slot "+start.Format("2006-01-02T15:04Z07:00")+" is taken")
	p.Extra = map[string]any{"alternatives": s.alternatives(r, tx, tenant, candidates, svc, start)}
	final(ctx, w, p)
}

func (s *Server) answerExisting(w http.ResponseWriter, r *http.Request, h Hold, req HoldRequest, start time.Time) {
	same := h.Start.Equal(start) && h.Service == req.Service && h.Customer == req.Customer &&
		(req.ResourceID == "" || req.ResourceID == h.ResourceID)
	if !same {
		final(r.Context(), w, web.NewProblem(http.StatusConflict, CodeReferenceConflict,
			"reference "+quote(req.Reference)+" already holds another slot ("+h.ID+")"))
		return
	}
	idempotency.SetResource(r.Context(), "hold", h.ID)
	web.WriteJSON(w, http.StatusOK, h)
}

func (s *Server) candidates(tenant string, resources []Resource, req HoldRequest, svc Service) ([]Resource, *web.Problem) {
	end := req.Start.Add(minutes(svc.DurationMinutes))
	zone := s.zone(tenant)
	var out []Resource
	known := false
	for _, res := range resources {
		if req.ResourceID != "" && res.ID != req.ResourceID {
			continue
		}
		known = true
		if withinHours(res, req.Start, end, zone) {
			out = append(out, res)
		}
	}
	if !known {
		return nil, web.NewProblem(http.StatusUnprocessableEntity, CodeUnknownResource, "unknown resource "+quote(req.ResourceID)+"; GET /v1/resources lists them")
	}
	if len(out) == 0 {
		return nil, web.NewProblem(http.StatusUnprocessableEntity, CodeOutsideOpeningHours,
			"the slot "+req.Start.In(zone).Format("Mon 2006-01-02 15:04")+" ("+zone.String()+") is outside opening hours")
	}
	return out, nil
}

// alternatives offers up to three free slots from the wished start on. It
// reads through the request's transaction: taking a second pool connection
// while holding one deadlocks under load.
func (s *Server) alternatives(r *http.Request, q querier, tenant string, resources []Resource, svc Service, start time.Time) []Slot {
	var out []Slot
	for _, res := range resources {
		b, err := busy(r.Context(), q, tenant, res.ID, start, start.Add(72*time.Hour), s.now())
		if err != nil {
			return out
		}
		out = append(out, freeSlots(res, b, start, start.Add(72*time.Hour), minutes(svc.DurationMinutes), 30*time.Minute, s.zone(tenant), 3-len(out))...)
		if len(out) >= 3 {
			break
		}
	}
	if out == nil {
		out = []Slot{}
	}
	return out
}

func validateHold(req HoldRequest) *web.Problem {
	var errs []web.FieldError
	if strings.TrimSpace(req.Service) == "" {
		errs = append(errs, web.FieldError{Field: "service", Detail: "required"})
	}
	if req.Start.IsZero() {
		errs = append(errs, web.FieldError{Field: "start", Detail: "required, RFC 3339 with a zone"})
	} else if req.Start.Second() != 0 || req.Start.Nanosecond() != 0 {
		errs = append(errs, web.FieldError{Field: "start", Detail: "must be on a whole minute"})
	}
	if strings.TrimSpace(req.Customer) == "" {
		errs = append(errs, web.FieldError{Field: "customer", Detail: "required"})
	}
	if strings.TrimSpace(req.Reference) == "" || len(req.Reference) > 255 {
		errs = append(errs, web.FieldError{Field: "reference", Detail: "required, at most 255 bytes"})
	}
	if ttl := time.Duration(req.TTLSeconds) * time.Second; req.TTLSeconds != 0 && (ttl < MinHoldTTL || ttl > MaxHoldTTL) {
		errs = append(errs, web.FieldError{Field: "ttl_seconds", Detail: "60 to 86400 seconds, or absent for the default"})
	}
	if len(errs) == 0 {
		return nil
	}
	p := web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "the hold request is invalid")
	p.Errors = errs
	return p
}

// holdTTL is the lifetime the request asked for, else the server's.
func (s *Server) holdTTL(req HoldRequest) time.Duration {
	if req.TTLSeconds > 0 {
		return time.Duration(req.TTLSeconds) * time.Second
	}
	return s.HoldTTL
}

func quote(s string) string { return `"` + s + `"` }

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }
