package channels

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/review"
)

func (g *Gateway) listCases(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	cases, err := g.Reviews.Store.ListOpen(r.Context(), tenant)
	if err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "list review cases failed"))
		return
	}
	if cases == nil {
		cases = []review.Case{}
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"data": cases})
}

// resolveCase records the decision once and signals the waiting workflow
// (review.Resolver, as the ops page does). The workflow ignores a second
// decision for the same case, so a repeated call (a double click) has no
// second effect.
func (g *Gateway) resolveCase(w http.ResponseWriter, r *http.Request) {
	tenant, _ := web.Tenant(r.Context())
	var body struct {
		Action review.Action `json:"action"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request",
			`body must be {"action": "`+review.Join(review.Actions(), "|")+`"}`))
		return
	}
	c, err := g.Reviews.Resolve(r.Context(), tenant, r.PathValue("id"), body.Action)
	var signalErr *review.SignalError
	switch {
	case err == nil:
		web.WriteJSON(w, http.StatusOK, c)
	case errors.Is(err, review.ErrUnknownAction), errors.Is(err, review.ErrActionDoesNotFit):
		web.WriteProblem(w, web.NewProblem(http.StatusBadRequest, "invalid_request", err.Error()))
	case errors.Is(err, review.ErrNotFound):
		web.WriteProblem(w, web.NewProblem(http.StatusNotFound, "not_found", "no review case "+r.PathValue("id")))
	case errors.As(err, &signalErr):
		web.WriteProblem(w, web.NewProblem(http.StatusBadGateway, "workflow_unreachable", "the workflow was not told, so the case stays open; resolve it again: "+err.Error()))
	case errors.Is(err, review.ErrAlreadyResolved):
		web.WriteProblem(w, web.NewProblem(http.StatusConflict, "already_resolved", err.Error()))
	default:
		g.log().Error("resolve review case", "case", r.PathValue("id"), "err", err)
		web.WriteProblem(w, web.NewProblem(http.StatusInternalServerError, "internal", "resolving the review case failed"))
	}
}
