package channels

import (
	"context"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// RouteRescheduleAppointment moves a confirmed booking to another slot
// (its BookingWorkflow's reschedule Update) on the gateway's bearer-token
// API.
const RouteRescheduleAppointment = "POST /v1/appointments/{id}/reschedule"

// rescheduleBody is the request body: the new start (RFC 3339) and,
// optionally, the resource.
type rescheduleBody struct {
	Start      string `json:"start"`
	ResourceID string `json:"resource_id,omitempty"`
}

// rescheduleAppointment sends the reschedule Update under an ID derived
// from the tenant and the Idempotency-Key: a retried request returns the
// first answer and moves the booking once.
func (g *Gateway) rescheduleAppointment(w http.ResponseWriter, r *http.Request) {
	tenant, id, key, ok := changeTarget(w, r)
	if !ok {
		return
	}
	req, p := decodeReschedule(r)
	if p != nil {
		web.WriteProblem(w, p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := lifecycle.Reschedule(ctx, g.Temporal, id, lifecycle.RescheduleUpdateID(tenant, key), req)
	if err != nil {
		g.changeFailed(w, id, err, ctx.Err() != nil, "the move", g.rescheduleRefusal(id))
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// decodeReschedule reads {"start": RFC 3339, "resource_id": optional}.
func decodeReschedule(r *http.Request) (lifecycle.RescheduleRequest, *web.Problem) {
	var body rescheduleBody
	bad := func(detail string) (lifecycle.RescheduleRequest, *web.Problem) {
		return lifecycle.RescheduleRequest{}, web.NewProblem(http.StatusBadRequest, "invalid_request", detail)
	}
	if err := decodeChange(r, &body, false); err != nil {
		return bad(`body must be {"start": "2026-12-01T14:00:00+01:00", "resource_id": "..." (optional)}`)
	}
	start, err := time.Parse(time.RFC3339, body.Start)
	if err != nil {
		return bad(`start must be RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00`)
	}
	return lifecycle.RescheduleRequest{Start: start, ResourceID: body.ResourceID}, nil
}

// rescheduleRefusal is the problem for the reschedule's refusals: a
// taken slot (with the alternatives), a booking that cannot move, a bad
// request, a calendar that did not answer.
func (g *Gateway) rescheduleRefusal(id string) func(*temporal.ApplicationError) *web.Problem {
	return func(e *temporal.ApplicationError) *web.Problem {
		switch e.Type() {
		case lifecycle.ErrTypeSlotUnavailable:
			p := web.NewProblem(http.StatusConflict, "slot_unavailable", e.Message())
			var refused lifecycle.RescheduleRefused
			if e.HasDetails() {
				if derr := e.Details(&refused); derr != nil {
					g.log().Warn("reschedule: decode alternatives", "workflow_id", id, "err", derr)
				}
			}
			if refused.Alternatives == nil {
				refused.Alternatives = []time.Time{}
			}
			p.Extra = map[string]any{"alternatives": refused.Alternatives}
			return p
		case lifecycle.ErrTypeNotReschedulable:
			return web.NewProblem(http.StatusConflict, "not_reschedulable", e.Message())
		case lifecycle.ErrTypeInvalidReschedule:
			return web.NewProblem(http.StatusBadRequest, "invalid_request", e.Message())
		case lifecycle.ErrTypeRescheduleFailed:
			// The server keeps this answer under the key: a new attempt
			// needs a new one.
			return web.NewProblem(http.StatusServiceUnavailable, "calendar_unavailable",
				e.Message()+"; try again with a new Idempotency-Key")
		}
		return nil
	}
}
