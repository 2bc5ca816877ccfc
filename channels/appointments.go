package channels

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

// RouteCancelAppointment cancels a confirmed booking (its BookingWorkflow's
// cancel Update) on the gateway's bearer-token API.
const RouteCancelAppointment = "POST /v1/appointments/{id}/cancel"

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// cancelWait bounds how long a request waits for the cancellation's
// answer; a slower one (a refund retried through an outage) goes on, and
// the same request with the same key later returns its answer.
const cancelWait = 30 * time.Second

// cancelAppointment sends the cancel Update under an ID derived from the
// tenant and the Idempotency-Key: the server deduplicates it, so a retry
// or a double click returns the first answer and refunds nothing twice.
func (g *Gateway) cancelAppointment(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	id := r.PathValue("id")
	// A tenant's token reaches only its own appointments; another's is
	// answered as unknown, not as forbidden, so IDs do not leak.
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
	var body workflows.CancelRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", `body must be {"reason": "..."} (or empty)`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := workflows.CancelAppointment(ctx, g.Temporal, id, workflows.CancelUpdateID(tenant, key), body.Reason)
	if err != nil {
		g.cancelFailed(w, id, err, ctx.Err() != nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// cancelFailed answers a cancellation that did not return a state;
// timedOut: the request's wait ran out (the Update may still complete).
func (g *Gateway) cancelFailed(w http.ResponseWriter, id string, err error, timedOut bool) {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &notFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found",
			"no running booking for "+id+": unknown, not confirmed (yet), or over"))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeNotCancellable:
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "not_cancellable", appErr.Message()))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeInvalidCancel:
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", appErr.Message()))
	case timedOut:
		web.WriteProblem(w, web.NewProblem(http.StatusGatewayTimeout, "pending",
			"the cancellation goes on; repeat the request with the same Idempotency-Key for its answer"))
	default:
		g.log().Error("cancel appointment", "workflow_id", id, "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable",
			"the cancellation could not be delivered; repeat it with the same Idempotency-Key"))
	}
}
