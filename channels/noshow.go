package channels

import (
	"context"
	"net/http"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// RouteNoShowAppointment marks a booking whose slot has begun as a
// no-show (its BookingWorkflow's no_show Update) on the gateway's
// bearer-token API.
const RouteNoShowAppointment = "POST /v1/appointments/{id}/no-show"

// noShowAppointment sends the no_show Update under an ID derived from the
// tenant and the Idempotency-Key, as cancelAppointment does for a cancel.
func (g *Gateway) noShowAppointment(w http.ResponseWriter, r *http.Request) {
	tenant, id, key, ok := changeTarget(w, r)
	if !ok {
		return
	}
	var body lifecycle.NoShowRequest
	if err := decodeChange(r, &body, true); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", `body must be {"note": "..."} (or empty)`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := lifecycle.MarkNoShow(ctx, g.Temporal, id, lifecycle.NoShowUpdateID(tenant, key), body)
	if err != nil {
		g.changeFailed(w, id, err, ctx.Err() != nil, "the no-show", noShowRefusal)
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// noShowRefusal is the problem for the no_show validator's refusals.
func noShowRefusal(e *temporal.ApplicationError) *web.Problem {
	switch e.Type() {
	case lifecycle.ErrTypeNotNoShow:
		return web.NewProblem(http.StatusConflict, "not_no_show", e.Message())
	case lifecycle.ErrTypeInvalidNoShow:
		return web.NewProblem(http.StatusBadRequest, "invalid_request", e.Message())
	}
	return nil
}
