package ops

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// changeWait bounds how long a button waits for the booking's answer, as
// the API does; a slower change goes on.
const changeWait = 30 * time.Second

// tokenPattern is a form's idempotency token (formToken).
var tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// bookingChange is one button: its Update, the Update ID it derives from
// the form's token, and how it is sent.
type bookingChange struct {
	name     string // in messages: "cancel", "no-show"
	updateID func(tenant, key string) string
	send     func(ctx context.Context, p *Page, id, updateID string, form url.Values) (lifecycle.State, error)
	refused  string // the validator's error type of a refusal
	invalid  string // the validator's error type of bad input
}

var (
	cancelChange = bookingChange{
		name: "cancel", updateID: lifecycle.CancelUpdateID, refused: lifecycle.ErrTypeNotCancellable, invalid: lifecycle.ErrTypeInvalidCancel,
		send: func(ctx context.Context, p *Page, id, updateID string, form url.Values) (lifecycle.State, error) {
			reason := strings.TrimSpace(form.Get("reason"))
			if reason == "" {
				reason = "cancelled by staff on the ops page"
			}
			return lifecycle.Cancel(ctx, p.Temporal, id, updateID, lifecycle.CancelRequest{Reason: reason})
		},
	}
	noShowChange = bookingChange{
		name: "no-show", updateID: lifecycle.NoShowUpdateID, refused: lifecycle.ErrTypeNotNoShow, invalid: lifecycle.ErrTypeInvalidNoShow,
		send: func(ctx context.Context, p *Page, id, updateID string, form url.Values) (lifecycle.State, error) {
			return lifecycle.MarkNoShow(ctx, p.Temporal, id, updateID, lifecycle.NoShowRequest{Note: strings.TrimSpace(form.Get("note"))})
		},
	}
)

func (p *Page) cancelBooking(w http.ResponseWriter, r *http.Request) { p.change(w, r, cancelChange) }
func (p *Page) noShowBooking(w http.ResponseWriter, r *http.Request) { p.change(w, r, noShowChange) }

// change sends a button's Update after the checks of every form (session,
// CSRF) and shows the booking's answer on the page.
func (p *Page) change(w http.ResponseWriter, r *http.Request, c bookingChange) {
	a, ok := p.authenticate(r)
	if !ok {
		p.unauthenticated(w, "Sign in again, then repeat the "+c.name+".")
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
	id := r.PathValue("id")
	if p.Temporal == nil || !reference.IsAppointmentOf(a.tenant, id) {
		p.errorPage(w, http.StatusNotFound, "No such booking", fmt.Sprintf("There is no booking %q for tenant %s. Nothing was changed.", mask.Phones(id), a.tenant))
		return
	}
	token := r.PostForm.Get("token")
	if !tokenPattern.MatchString(token) {
		p.errorPage(w, http.StatusBadRequest, "Bad request", "The form's idempotency token is missing or malformed; nothing was changed. Reload the page and try again.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), changeWait)
	defer cancel()
	// "ops:" keeps a form's token apart from the API's Idempotency-Keys.
	_, err := c.send(ctx, p, id, c.updateID(a.tenant, "ops:"+token), r.PostForm)
	if err != nil {
		p.changeFailed(w, c, id, err, ctx.Err() != nil)
		return
	}
	http.Redirect(w, r, RoutePage+"?"+url.Values{"booking": {id}}.Encode()+"#bookings", http.StatusSeeOther)
}

// changeFailed shows why a button did not return the booking's state.
func (p *Page) changeFailed(w http.ResponseWriter, c bookingChange, id string, err error, timedOut bool) {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	shown := mask.Phones(id)
	switch {
	case errors.As(err, &notFound):
		p.errorPage(w, http.StatusNotFound, "No such booking", fmt.Sprintf("There is no running booking %s: unknown, or over. Nothing was changed.", shown))
	case errors.As(err, &appErr) && appErr.Type() == c.refused:
		p.errorPage(w, http.StatusConflict, "Refused", fmt.Sprintf("Booking %s: %s. Nothing was changed.", shown, mask.Phones(appErr.Message())))
	case errors.As(err, &appErr) && appErr.Type() == c.invalid:
		p.errorPage(w, http.StatusBadRequest, "Bad request", fmt.Sprintf("Booking %s: %s. Nothing was changed.", shown, mask.Phones(appErr.Message())))
	case timedOut:
		p.errorPage(w, http.StatusGatewayTimeout, "Still going on", fmt.Sprintf("The %s of booking %s goes on. Go back and press the same button again (the same form) for its answer; it acts only once.", c.name, shown))
	default:
		p.log().Error("ops: booking change", "change", c.name, "workflow_id", shown, "err", err)
		p.errorPage(w, http.StatusBadGateway, "Not delivered", fmt.Sprintf("The %s of booking %s could not be delivered. Go back and press the same button again; it acts only once.", c.name, shown))
	}
}

// changedNotice tells, after a button, the booking's state as the booking
// itself reports it (never text from the URL).
func (p *Page) changedNotice(ctx context.Context, tenant, id string) string {
	if p.Temporal == nil || !reference.IsAppointmentOf(tenant, id) {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, policyBudget)
	defer cancel()
	v, err := p.Temporal.QueryWorkflow(ctx, lifecycle.WorkflowID(id), "", lifecycle.QueryLifecycle)
	var st lifecycle.State
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		return fmt.Sprintf("Booking %s: its state could not be read (%s).", mask.Phones(id), mask.Phones(err.Error()))
	}
	return fmt.Sprintf("Booking %s is %s: %s", mask.Phones(id), st.Status, mask.Phones(st.Reason))
}
