package channels

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

func (g *Gateway) listCases(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	cases, err := g.Reviews.ListOpen(r.Context(), tenant)
	if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "list review cases failed"))
		return
	}
	if cases == nil {
		cases = []review.Case{}
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"data": cases})
}

// resolveCase records the decision once and signals the waiting workflow.
// The workflow ignores a second decision for the same case, so a repeated
// call (a double click) has no second effect.
func (g *Gateway) resolveCase(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	var body struct {
		Action review.Action `json:"action"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", "body must be {\"action\": \"merge|separate|retry|abandon|proceed\"}"))
		return
	}
	switch body.Action {
	case review.ActionMerge, review.ActionSeparate, review.ActionRetry, review.ActionAbandon, review.ActionProceed:
	default:
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", "action must be merge, separate, retry, abandon or proceed"))
		return
	}
	c, err := g.resolve(r.Context(), tenant, r.PathValue("id"), body.Action)
	var signalErr *signalError
	switch {
	case errors.Is(err, review.ErrNotFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no review case "+r.PathValue("id")))
		return
	case errors.As(err, &signalErr):
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable", "decision recorded; resolve again to re-send it: "+err.Error()))
		return
	case err != nil:
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "already_resolved", err.Error()))
		return
	}
	web.WriteJSON(w, http.StatusOK, c)
}

// signalError says the decision is recorded but the workflow was not told.
type signalError struct{ err error }

func (e *signalError) Error() string { return "signal workflow: " + e.err.Error() }
func (e *signalError) Unwrap() error { return e.err }

// ResolveCase records a reviewer's decision once and signals the waiting
// workflow; the ops page and the API share it. The workflow ignores a
// second decision for the same case, so repeating it is harmless.
func (g *Gateway) ResolveCase(ctx context.Context, tenant, id string, action review.Action) error {
	_, err := g.resolve(ctx, tenant, id, action)
	return err
}

func (g *Gateway) resolve(ctx context.Context, tenant, id string, action review.Action) (review.Case, error) {
	c, err := g.Reviews.Get(ctx, id)
	if err != nil {
		return c, err
	}
	if c.Tenant != tenant {
		return review.Case{}, review.ErrNotFound
	}
	if c, err = g.Reviews.Resolve(ctx, c.ID, action); err != nil {
		return c, err
	}
	if c.Reason == review.ReasonOrphanedEffect {
		return c, nil // the reconciler's cases: no workflow waits (the saga ended)
	}
	err = g.Temporal.SignalWorkflow(ctx, c.WorkflowID, "", workflows.SignalReviewDecision,
		workflows.ReviewDecision{CaseID: c.ID, Action: action})
	if err != nil {
		return c, &signalError{err}
	}
	return c, nil
}
