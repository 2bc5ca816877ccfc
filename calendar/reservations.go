package calendar

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/bookonce/bookonce/internal/web"
)

// ReservationsPage is the most reservations one GET /v1/reservations
// answers; a full page means there may be more (ask again with after).
const ReservationsPage = 500

// listReservations lists a tenant's reservations in one state across all
// references, oldest first: GET /v1/reservations?status=held|confirmed.
// The reconciler sweeps with it for holds and bookings whose saga is gone;
// created_after and created_before bound the window, after (a reservation
// ID) pages on.
func (s *Server) listReservations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := HoldStatus(q.Get("status"))
	if status != HoldHeld && status != HoldConfirmed {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, "query parameter status must be held or confirmed"))
		return
	}
	sql := `SELECT ` + reservationColumns + ` FROM calendar_reservations WHERE tenant_id = $1 AND status = $2`
	args := []any{tenantOf(r), string(status)}
	for _, bound := range []struct{ name, value, op string }{
		{"created_after", q.Get("created_after"), ">="}, {"created_before", q.Get("created_before"), "<"},
	} {
		if bound.value == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, bound.value)
		if err != nil {
			web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, CodeInvalidRequest, bound.name+" must be an RFC 3339 time"))
			return
		}
		args = append(args, at)
		sql += ` AND created_at ` + bound.op + ` $` + strconv.Itoa(len(args))
	}
	if after := q.Get("after"); after != "" {
		args = append(args, after)
		n := strconv.Itoa(len(args))
		sql += ` AND (created_at, id) > (SELECT created_at, id FROM calendar_reservations WHERE tenant_id = $1 AND id = $` + n + `)`
	}
	s.writeReservations(w, r, "list reservations", sql+` ORDER BY created_at, id LIMIT `+strconv.Itoa(ReservationsPage), args...)
}

// Reservations lists the tenant's reservations in status (HoldHeld or
// HoldConfirmed) created in [from, to), oldest first, following pages.
// A zero from or to leaves that side open.
func (c *Client) Reservations(ctx context.Context, status HoldStatus, from, to time.Time) ([]Hold, error) {
	var all []Hold
	after := ""
	for {
		q := url.Values{"status": {string(status)}}
		if !from.IsZero() {
			q.Set("created_after", from.UTC().Format(time.RFC3339Nano))
		}
		if !to.IsZero() {
			q.Set("created_before", to.UTC().Format(time.RFC3339Nano))
		}
		if after != "" {
			q.Set("after", after)
		}
		var l List[Hold]
		if err := c.do(ctx, "list reservations", http.MethodGet, "/v1/reservations?"+q.Encode(), "", nil, &l); err != nil {
			return nil, err
		}
		all = append(all, l.Data...)
		if len(l.Data) < ReservationsPage {
			return all, nil
		}
		after = l.Data[len(l.Data)-1].ID
	}
}
