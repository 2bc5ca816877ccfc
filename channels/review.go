package channels

import (
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
	c, err := g.Reviews.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, review.ErrNotFound) || (err == nil && c.Tenant != tenant) {
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no review case "+r.PathValue("id")))
		return
	} else if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "load review case failed"))
		return
	}
	c, err = g.Reviews.Resolve(r.Context(), c.ID, body.Action)
	if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "already_resolved", err.Error()))
		return
	}
	err = g.Temporal.SignalWorkflow(r.Context(), c.WorkflowID, "", workflows.SignalReviewDecision,
		workflows.ReviewDecision{CaseID: c.ID, Action: body.Action})
	if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable", "decision recorded; signal the workflow again: "+err.Error()))
		return
	}
	web.WriteJSON(w, http.StatusOK, c)
}
