package ops

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/review"
)

// resolve hands a form's decision to review.Resolver (as the review API
// does) and shows what came of it. A resolved case with the same action
// is a double click or a retry after a lost signal: the resolver records
// nothing new and signals again (the workflow ignores a second decision).
func (p *Page) resolve(w http.ResponseWriter, r *http.Request) {
	a, ok := p.authenticate(r)
	if !ok {
		p.unauthenticated(w, "Sign in again, then repeat the decision.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	if a.cookie != "" && !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(a.csrf(p.sessionKey()))) {
		p.errorPage(w, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong; nothing was changed. Reload the page and try again.")
		return
	}
	id, action := r.PathValue("id"), review.Action(r.PostForm.Get("action"))
	c, err := p.Reviews.Resolve(r.Context(), a.tenant, id, action)
	if err != nil {
		p.resolveFailed(w, a.tenant, id, action, c, err)
		return
	}
	http.Redirect(w, r, RoutePage+"?"+url.Values{"resolved": {c.ID}, "action": {string(action)}}.Encode(), http.StatusSeeOther)
}

// resolveFailed shows why a decision did not (fully) take effect.
func (p *Page) resolveFailed(w http.ResponseWriter, tenant, id string, action review.Action, c review.Case, err error) {
	var signalErr *review.SignalError
	switch {
	case errors.Is(err, review.ErrUnknownAction):
		p.errorPage(w, http.StatusBadRequest, "Unknown action",
			fmt.Sprintf("%q is not a decision; use %s. Nothing was changed.", string(action), review.Join(review.Actions(), ", ")))
	case errors.Is(err, review.ErrNotFound):
		p.errorPage(w, http.StatusNotFound, "No such review case", fmt.Sprintf("There is no review case %q for tenant %s. Nothing was changed.", id, tenant))
	case errors.Is(err, review.ErrActionDoesNotFit):
		p.errorPage(w, http.StatusBadRequest, "Action does not fit the case",
			fmt.Sprintf("A %s case can be resolved with %s, not %s. Nothing was changed.", c.Reason, review.Join(review.ActionsFor(c.Reason), ", "), action))
	case errors.Is(err, review.ErrAlreadyResolved):
		p.errorPage(w, http.StatusConflict, "Already resolved",
			fmt.Sprintf("Case %s was already resolved as %s. Nothing was changed.", c.ID, c.Resolution))
	case errors.As(err, &signalErr):
		p.log().Error("resolve review case: signal", "case", id, "action", action, "err", err)
		p.errorPage(w, http.StatusBadGateway, "Resolve failed",
			fmt.Sprintf("Case %s was not resolved: its workflow could not be told (%s), so the case stays open. Resolve it again.", id, mask.Phones(err.Error())))
	default:
		p.log().Error("resolve review case", "case", id, "action", action, "err", err)
		p.errorPage(w, http.StatusInternalServerError, "Internal error",
			fmt.Sprintf("Resolving case %s as %s failed. If the decision was recorded, resolving again with the same action signals the workflow again.", id, action))
	}
}
