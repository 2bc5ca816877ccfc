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

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
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
	tenant, _ := web.Tenant(r.Context())
	id := r.PathValue("id")
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
	req, p := decodeReschedule(r)
	if p != nil {
		web.WriteProblem(w, p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := workflows.RescheduleAppointment(ctx, g.Temporal, id, workflows.RescheduleUpdateID(tenant, key), req)
	if err != nil {
		g.rescheduleFailed(w, id, err, ctx.Err() != nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// decodeReschedule reads {"start": RFC 3339, "resource_id": optional}.
func decodeReschedule(r *http.Request) (workflows.RescheduleRequest, *web.Problem) {
	var body rescheduleBody
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	bad := func(detail string) (workflows.RescheduleRequest, *web.Problem) {
		return workflows.RescheduleRequest{}, web.NewProblem(http.StatusBadRequest, "invalid_request", detail)
	}
	if err := dec.Decode(&body); err != nil {
		return bad(`body must be {"start": "2026-12-01T14:00:00+01:00", "resource_id": "..." (optional)}`)
	}
	start, err := time.Parse(time.RFC3339, body.Start)
	if err != nil {
		return bad(`start must be RFC 3339 with a zone, e.g. 2026-12-01T14:00:00+01:00`)
	}
	return workflows.RescheduleRequest{Start: start, ResourceID: body.ResourceID}, nil
}

// rescheduleFailed answers a reschedule that did not return a state;
// timedOut: the request's wait ran out (the Update may still complete).
func (g *Gateway) rescheduleFailed(w http.ResponseWriter, id string, err error, timedOut bool) {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &notFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found",
			"no running booking for "+id+": unknown, not confirmed (yet), or over"))
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeSlotUnavailable:
		p := web.NewProblem(http.StatusConflict, "slot_unavailable", appErr.Message())
		var refused workflows.RescheduleRefused
		if appErr.HasDetails() {
			if derr := appErr.Details(&refused); derr != nil {
				g.log().Warn("reschedule: decode alternatives", "workflow_id", id, "err", derr)
			}
		}
		if refused.Alternatives == nil {
			refused.Alternatives = []time.Time{}
		}
		p.Extra = map[string]any{"alternatives": refused.Alternatives}
		web.WriteProblem(w, p)
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeNotReschedulable:
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "not_reschedulable", appErr.Message()))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeInvalidReschedule:
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", appErr.Message()))
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeRescheduleFailed:
		// The server keeps this answer under the key: a new attempt needs
		// a new one.
		web.WriteProblem(w, web.NewProblem(http.StatusServiceUnavailable, "calendar_unavailable",
			appErr.Message()+"; try again with a new Idempotency-Key"))
	case timedOut:
		web.WriteProblem(w, web.NewProblem(http.StatusGatewayTimeout, "pending",
			"the move goes on; repeat the request with the same Idempotency-Key for its answer"))
	default:
		g.log().Error("reschedule appointment", "workflow_id", id, "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable",
			"the move could not be completed; the booking is unchanged unless its state says otherwise: repeat it with the same Idempotency-Key"))
	}
}
