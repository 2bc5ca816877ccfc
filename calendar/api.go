package calendar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/web"
)

// Server is the calendar API.
type Server struct {
	// AuthLimiter is the failed-authentication budget per client; nil:
	// the default, keyed on the connection's peer.
	AuthLimiter *web.AuthLimiter
	Pool        *pgxpool.Pool
	Idempotency *idempotency.Store
	// Tokens authenticates bearer tokens (token -> tenant).
	Tokens web.TokenLookup
	// Timezone is the zone of opening hours of tenants Zones does not
	// know (or of all tenants when Zones is nil).
	Timezone *time.Location
	// Zones returns a tenant's time zone (its opening hours are in it);
	// nil for a tenant it does not know.
	Zones func(tenant string) *time.Location
	// HoldTTL is how long a hold lives unconfirmed.
	HoldTTL time.Duration
	// Region reads customer numbers without a country code (the front desk
	// types "0151 ..."); empty means DE.
	Region string
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// zone is the time zone of a tenant's opening hours.
func (s *Server) zone(tenant string) *time.Location {
	if s.Zones != nil {
		if loc := s.Zones(tenant); loc != nil {
			return loc
		}
	}
	if s.Timezone != nil {
		return s.Timezone
	}
	return time.UTC
}

// Operation names: the idempotency scope of each mutating route.
const (
	OpCreateHold    = "POST /v1/holds"
	OpConfirmHold   = "POST /v1/holds/{id}/confirm"
	OpReleaseHold   = "POST /v1/holds/{id}/release"
	OpCancelBooking = "POST /v1/bookings/{id}/cancel"
)

// Handler returns the API's routes, all behind bearer authentication.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	idem := func(op string, h http.HandlerFunc) {
		mux.Handle(op, s.Idempotency.Middleware(op, h))
	}
	idem(OpCreateHold, s.createHold)
	idem(OpConfirmHold, s.confirmHold)
	idem(OpReleaseHold, s.releaseHold)
	idem(OpCancelBooking, s.cancelBooking)
	mux.HandleFunc("GET /v1/holds/{id}", s.getHold)
	mux.HandleFunc("GET /v1/holds", s.listHolds)
	mux.HandleFunc("GET /v1/bookings", s.listBookings)
	mux.HandleFunc("GET /v1/reservations", s.listReservations)
	mux.HandleFunc("GET /v1/bookings/{id}", s.getBooking)
	mux.HandleFunc("GET /v1/availability", s.availability)
	mux.HandleFunc("GET /v1/resources", s.listResources)
	mux.HandleFunc("PUT /v1/resources/{id}/blocks", s.putBlocks)
	mux.HandleFunc("GET /v1/services", s.listServices)
	mux.HandleFunc("GET /v1/operations/{key}", s.getOperation)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, CodeNotFound, "no route "+r.Method+" "+r.URL.Path))
	})
	return web.BearerAuthLimited(s.Tokens, s.AuthLimiter, mux)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Server) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func tenantOf(r *http.Request) string {
	t, _ := web.Tenant(r.Context())
	return t
}

// decodeStrict decodes a JSON body, rejecting unknown fields and trailing
// data so that typos never silently change a booking.
func decodeStrict(r *http.Request, v any) *web.Problem {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "request body: "+describeJSONError(err))
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "request body: trailing data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case errors.As(err, &pe):
		return "times must be RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00 (" + pe.Error() + ")"
	case errors.As(err, &te):
		return fmt.Sprintf("field %q must be a %s", te.Field, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ")
	case errors.Is(err, io.EOF):
		return "empty body; send a JSON object"
	default:
		return err.Error()
	}
}

// internalError answers 500; the middleware rolls the transaction back and
// releases the key, so a retry runs again.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log().ErrorContext(r.Context(), "calendar: "+what, "err", err)
	web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", what+" failed"))
}

// final writes a problem that is the decided outcome of the operation: it is
// stored with the key and replayed.
func final(ctx context.Context, w http.ResponseWriter, p *web.Problem) {
	idempotency.Keep(ctx)
	web.WriteProblem(w, p)
}
