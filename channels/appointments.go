package channels

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows/lifecycle"
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
// The body's flags are the Update's: only_if_refunded refuses (409
// deposit_would_be_kept) a cancel that would keep the deposit,
// refund_in_full refunds whatever the tenant's window (the shop waives it).
func (g *Gateway) cancelAppointment(w http.ResponseWriter, r *http.Request) {
	tenant, id, key, ok := changeTarget(w, r)
	if !ok {
		return
	}
	var body lifecycle.CancelRequest
	if err := decodeChange(r, &body, true); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request",
			`body must be {"reason": "...", "only_if_refunded": bool, "refund_in_full": bool} (each optional, or empty)`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), cancelWait)
	defer cancel()
	st, err := lifecycle.Cancel(ctx, g.Temporal, id, lifecycle.CancelUpdateID(tenant, key), body)
	if err != nil {
		g.changeFailed(w, id, err, ctx.Err() != nil, "the cancellation", cancelRefusal)
		return
	}
	web.WriteJSON(w, http.StatusOK, st)
}

// cancelRefusal is the problem for the cancel validator's refusals.
func cancelRefusal(e *temporal.ApplicationError) *web.Problem {
	switch e.Type() {
	case lifecycle.ErrTypeNotCancellable:
		return web.NewProblem(http.StatusConflict, "not_cancellable", e.Message())
	case lifecycle.ErrTypeInvalidCancel:
		return web.NewProblem(http.StatusBadRequest, "invalid_request", e.Message())
	case lifecycle.ErrTypeDepositWouldBeKept:
		// only_if_refunded: nothing was cancelled; the caller asks the
		// customer first, then cancels without the flag.
		return web.NewProblem(http.StatusConflict, "deposit_would_be_kept", e.Message())
	}
	return nil
}

// changeTarget reads what every change of an appointment starts with:
// the appointment, only the tenant's own (another tenant's is answered as
// unknown, not as forbidden, so IDs do not leak), and the Idempotency-Key
// the Update ID derives from. It answers the problem and reports false
// when one is wrong.
func changeTarget(w http.ResponseWriter, r *http.Request) (tenant, id, key string, ok bool) {
	tenant, _ = web.Tenant(r.Context())
	id = r.PathValue("id")
	if !reference.IsAppointmentOf(tenant, id) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no appointment "+id))
		return "", "", "", false
	}
	key = r.Header.Get("Idempotency-Key")
	if key == "" || len(key) > maxIdempotencyKey {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "idempotency_key_required",
			"send an Idempotency-Key header (1 to 255 characters); a retry with the same key returns the first answer"))
		return "", "", "", false
	}
	return tenant, id, key, true
}

// decodeChange reads a change's small JSON body into v, refusing unknown
// fields; optional: an empty body is no error.
func decodeChange(r *http.Request, v any, optional bool) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if optional && errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// changeFailed answers a change that did not return a state: the
// change's own refusals (refusal; nil for any other error), then what all
// changes share. what names the change in the answer; timedOut: the
// request's wait ran out (the Update may still complete).
func (g *Gateway) changeFailed(w http.ResponseWriter, id string, err error, timedOut bool, what string, refusal func(*temporal.ApplicationError) *web.Problem) {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		if p := refusal(appErr); p != nil {
			web.WriteProblem(w, p)
			return
		}
	}
	switch {
	case errors.As(err, &notFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found",
			"no running booking for "+id+": unknown, not confirmed (yet), or over"))
	case timedOut:
		web.WriteProblem(w, web.NewProblem(http.StatusGatewayTimeout, "pending",
			what+" goes on; repeat the request with the same Idempotency-Key for its answer"))
	default:
		g.log().Error("change appointment", "change", what, "workflow_id", id, "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable",
			what+" could not be delivered; repeat it with the same Idempotency-Key"))
	}
}
