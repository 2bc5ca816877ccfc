package ops

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/review"
)

func validAction(a review.Action, reason review.Reason) bool {
	for _, x := range ActionsFor(reason) {
		if x == a {
			return true
		}
	}
	return false
}

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
	if a.cookie != "" && !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(a.csrf())) {
		p.errorPage(w, http.StatusForbidden, "Forbidden", "The form's CSRF token is missing or wrong; nothing was changed. Reload the page and try again.")
		return
	}
	action := review.Action(r.PostForm.Get("action"))
	if !validAction(action, "") {
		p.errorPage(w, http.StatusBadRequest, "Unknown action", fmt.Sprintf("%q is not a decision; use merge, separate, retry, abandon or proceed. Nothing was changed.", string(action)))
		return
	}
	id := r.PathValue("id")
	c, err := p.Reviews.Get(r.Context(), id)
	if errors.Is(err, review.ErrNotFound) || (err == nil && c.Tenant != a.tenant) {
		p.errorPage(w, http.StatusNotFound, "No such review case", fmt.Sprintf("There is no review case %q for tenant %s. Nothing was changed.", id, a.tenant))
		return
	} else if err != nil {
		p.log().Error("load review case", "case", id, "err", err)
		p.errorPage(w, http.StatusInternalServerError, "Internal error", "The review case could not be loaded; nothing was changed.")
		return
	}
	if !validAction(action, c.Reason) {
		p.errorPage(w, http.StatusBadRequest, "Action does not fit the case",
			fmt.Sprintf("A %s case can be resolved with %s, not %s. Nothing was changed.", c.Reason, joinActions(ActionsFor(c.Reason)), action))
		return
	}
	// A resolved case with the same action is a double click or a retry
	// after a lost signal: Resolve is idempotent for it and signals again
	// (the workflow ignores a second decision). Another action conflicts.
	if c.Status != "open" && c.Resolution != action {
		p.errorPage(w, http.StatusConflict, "Already resolved",
			fmt.Sprintf("Case %s was already resolved as %s. Nothing was changed.", c.ID, c.Resolution))
		return
	}
	if err := p.Resolve(r.Context(), a.tenant, c.ID, action); err != nil {
		p.log().Error("resolve review case", "case", c.ID, "action", action, "err", err)
		p.errorPage(w, http.StatusBadGateway, "Resolve failed",
			fmt.Sprintf("Resolving case %s as %s failed: %s. If the decision was recorded, resolving again with the same action signals the workflow again.", c.ID, action, mask.Phones(err.Error())))
		return
	}
	http.Redirect(w, r, RoutePage+"?"+url.Values{"resolved": {c.ID}, "action": {string(action)}}.Encode(), http.StatusSeeOther)
}

func joinActions(as []review.Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}
