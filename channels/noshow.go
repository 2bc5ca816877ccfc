package channels

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

// RouteNoShowAppointment marks a booking whose slot has begun as a
// no-show (its BookingWorkflow's no_show Update) on the gateway's
// bearer-token API.
const RouteNoShowAppointment = "POST /v1/appointments/{id}/no-show"

// noShowAppointment sends the no_show Update under an ID derived from the
// tenant and the Idempotency-Key, as cancelAppointment does for a cancel.
func (g *Gateway) noShowAppointment(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	id := r.PathValue("id")
	// Another tenant's appointment is answered as unknown, as for a cancel.
	if !strings.HasPrefix(id, workflows.AppointmentWorkflowID(tenant, "")) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no appointment "+id))
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" || len(key) > maxIdempotencyKey {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "idempotency_key_required",
			"send an Idempotency-Key header (1 to 255 characters); a retry with the same key returns the first answer"))
		return
	}
	var body workflows.NoShowRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", `body must be {"note": "..."} (or empty)`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := workflows.MarkNoShow(ctx, g.Temporal, id, workflows.NoShowUpdateID(tenant, key), body)
	if err != nil {
		g.noShowFailed(w, id, err, ctx.Err() != nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// noShowFailed answers a no_show that did not return a state.
func (g *Gateway) noShowFailed(w http.ResponseWriter, id string, err error, timedOut bool) {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &notFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found",
			"no running booking for "+id+": unknown, not confirmed (yet), or over"))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeNotNoShow:
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "not_no_show", appErr.Message()))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeInvalidNoShow:
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", appErr.Message()))
	case timedOut:
		web.WriteProblem(w, web.NewProblem(http.StatusGatewayTimeout, "pending",
			"the no-show is being recorded; repeat the request with the same Idempotency-Key for its answer"))
	default:
		g.log().Error("mark no-show", "workflow_id", id, "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable",
			"the no-show could not be delivered; repeat it with the same Idempotency-Key"))
	}
}
