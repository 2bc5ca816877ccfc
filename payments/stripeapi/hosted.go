package stripeapi

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/payments"
)

//go:embed hosted.html
var hostedHTML string

var hostedPage = template.Must(template.New("hosted").Parse(hostedHTML))

// pageCard is one test card offered on the page.
type pageCard struct{ ID, Label string }

// pageView is what the template shows. State is open (the card choice),
// challenge (3-D Secure), done, or anything else (Message only).
type pageView struct {
	Lang, State, Message, Error       string
	Merchant, Amount, Expires, Action string
	SuccessURL, CancelURL             string
	Cards                             []pageCard
	T                                 pageText
}

// payOutcome is the hosted page's answer: an HTTP status a script can act
// on, and what the customer reads.
type payOutcome struct {
	status  int
	state   string // template state
	message string // for states without a form
	err     string // a decline, shown above the form
	session sessionRow
}

var pageQuerySpec = formSpec{scalars: []string{"locale"}}

// payPage is GET /pay/{session}: the hosted payment page. ?locale=de|en
// overrides the session's language.
func (s *Server) payPage(w http.ResponseWriter, r *http.Request) {
	f, apiErr := readQuery(r, pageQuerySpec)
	if apiErr != nil {
		s.render(w, r, "", payOutcome{status: http.StatusBadRequest, message: apiErr.Message})
		return
	}
	locale, _ := f.str("locale")
	row, err := sessionByID(r.Context(), s.Pool, r.PathValue("session"), false)
	if err == nil {
		row, err = refreshExpiry(r.Context(), s.Pool, row, s.now())
	}
	if err != nil && !errors.Is(err, errNotFound) {
		s.log().ErrorContext(r.Context(), "payments: hosted page", "err", err)
		s.render(w, r, locale, payOutcome{status: http.StatusInternalServerError, state: "failed"})
		return
	}
	s.render(w, r, locale, stateOutcome(row, err))
}

// stateOutcome is the page of a session that is not paid in this request.
func stateOutcome(row sessionRow, err error) payOutcome {
	switch {
	case err != nil:
		return payOutcome{status: http.StatusNotFound, state: "notfound"}
	case row.Status == payments.SessionExpired:
		return payOutcome{status: http.StatusGone, state: "expired", session: row}
	case row.Status == payments.SessionComplete:
		return payOutcome{status: http.StatusConflict, state: "complete", session: row}
	case row.IntentStatus == StatusRequiresAction:
		return payOutcome{status: http.StatusOK, state: "challenge", session: row}
	}
	return payOutcome{status: http.StatusOK, state: "open", err: row.LastError, session: row}
}

var payFormSpec = formSpec{scalars: []string{"payment_method", "authentication"}}

// pay is POST /pay/{session}: the customer pays with payment_method=<test
// card>, or answers a 3-D Secure challenge with authentication=approve or
// deny. The session row is locked for the whole decision, so a double tap
// completes it once and the second tap reads "already paid" (409).
func (s *Server) pay(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, apiErr := readForm(r, payFormSpec)
	if apiErr != nil {
		s.render(w, r, "", payOutcome{status: http.StatusBadRequest, message: apiErr.Message})
		return
	}
	var out payOutcome
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		out, err = s.decidePayment(ctx, tx, r.PathValue("session"), f)
		return err
	})
	if err != nil {
		// Rolled back: nothing was charged, the customer may try again.
		s.log().ErrorContext(ctx, "payments: hosted payment", "err", err)
		out = payOutcome{status: http.StatusInternalServerError, state: "failed"}
	}
	s.render(w, r, "", out)
}

// decidePayment runs one payment attempt in tx; an error rolls it back.
func (s *Server) decidePayment(ctx context.Context, tx pgx.Tx, id string, f form) (payOutcome, error) {
	row, err := sessionByID(ctx, tx, id, true)
	if errors.Is(err, errNotFound) {
		return stateOutcome(row, err), nil
	} else if err != nil {
		return payOutcome{}, err
	}
	now := s.now()
	if row.due(now) {
		return stateOutcome(row, expireSession(ctx, tx, &row, eventSource{}, now)), nil
	}
	if row.Status != payments.SessionOpen {
		return stateOutcome(row, nil), nil
	}
	pm, hasPM := f.str("payment_method")
	answer, hasAuth := f.str("authentication")
	if hasPM == hasAuth {
		return payOutcome{status: http.StatusBadRequest, state: "open", session: row, err: "send payment_method or authentication"}, nil
	}
	intent, err := s.sessionIntent(ctx, tx, &row, now)
	if err != nil {
		return payOutcome{}, err
	}
	if !confirmable(intent.Status) {
		return payOutcome{status: http.StatusConflict, state: "unusable", session: row}, nil
	}
	var d *decline
	switch {
	case hasAuth && (intent.Status != StatusRequiresAction || (answer != "approve" && answer != "deny")):
		return payOutcome{status: http.StatusBadRequest, state: "open", session: row, err: "no 3-D Secure challenge to " + answer}, nil
	case hasAuth:
		pm = intent.PaymentMethod
		if answer == "deny" {
			d = authenticationFailed
		}
	case pm == cardAuthenticationRequired:
		if err := requireAction(ctx, tx, row.Tenant, &intent, pm); err != nil {
			return payOutcome{}, err
		}
		row.IntentStatus = intent.Status
		return payOutcome{status: http.StatusOK, state: "challenge", session: row}, attachIntent(ctx, tx, &row, intent.ID, "")
	default:
		var known bool
		if d, known = testCards[pm]; !known {
			return payOutcome{status: http.StatusBadRequest, state: "open", session: row, err: "unknown test card " + strconv.Quote(pm)}, nil
		}
	}
	return s.settleSession(ctx, tx, &row, &intent, pm, d, now)
}

// settleSession confirms the session's intent with the card and completes
// the session, or shows the decline and leaves it open.
func (s *Server) settleSession(ctx context.Context, tx pgx.Tx, row *sessionRow, intent *intentRow, pm string, d *decline, now time.Time) (payOutcome, error) {
	err := settleCard(ctx, tx, row.Tenant, intent, pm, d, eventSource{}, now)
	if errors.Is(err, errStepAuthorised) {
		return payOutcome{status: http.StatusConflict, state: "steppaid", session: *row}, nil
	} else if err != nil {
		return payOutcome{}, err
	}
	if d != nil {
		row.IntentStatus = intent.Status
		return payOutcome{status: http.StatusPaymentRequired, state: "open", err: d.message, session: *row},
			attachIntent(ctx, tx, row, intent.ID, d.message)
	}
	if err := attachIntent(ctx, tx, row, intent.ID, ""); err != nil {
		return payOutcome{}, err
	}
	if err := completeSession(ctx, tx, row, intent.Status, now); err != nil {
		return payOutcome{}, err
	}
	return payOutcome{status: http.StatusOK, state: "done", session: *row}, nil
}

// sessionIntent returns the session's PaymentIntent, locked, creating it
// (unconfirmed, with payment_intent_data) on the first attempt through the
// same insert as POST /v1/payment_intents.
func (s *Server) sessionIntent(ctx context.Context, tx pgx.Tx, row *sessionRow, now time.Time) (intentRow, error) {
	if row.PaymentIntentID != "" {
		return getIntent(ctx, tx, row.Tenant, row.PaymentIntentID, true)
	}
	in := intentRow{
		ID: newID("pi_"), Amount: row.AmountTotal, Currency: row.Currency, Status: payments.StatusRequiresPaymentMethod,
		CaptureMethod: row.CaptureMethod, Description: row.Description, Metadata: row.IntentMetadata, CreatedAt: now,
	}
	if err := insertIntent(ctx, tx, row.Tenant, in, nil); err != nil {
		return intentRow{}, err
	}
	return in, attachIntent(ctx, tx, row, in.ID, row.LastError)
}

// render writes the page for out in the chosen language.
func (s *Server) render(w http.ResponseWriter, r *http.Request, locale string, out payOutcome) {
	row := out.session
	if locale == "" {
		locale = row.Locale
	}
	lang := pageLang(locale, r.Header.Get("Accept-Language"))
	t := pageTexts[lang]
	v := pageView{Lang: lang, State: out.state, Error: out.err, T: t, Action: "/pay/" + row.ID,
		SuccessURL: strings.ReplaceAll(row.SuccessURL, "{CHECKOUT_SESSION_ID}", row.ID), CancelURL: row.CancelURL}
	if row.ID != "" {
		v.Merchant, v.Amount = row.Description, formatAmount(row.AmountTotal, row.Currency, lang)
		if v.Merchant == "" && len(row.LineItems) > 0 {
			v.Merchant = row.LineItems[0].Name
		}
		v.Expires = formatTime(row.ExpiresAt, s.Timezone, lang)
	}
	for _, id := range pageCards {
		v.Cards = append(v.Cards, pageCard{ID: id, Label: t.Cards[id]})
	}
	v.Message = map[string]string{"notfound": t.NotFound, "expired": t.Expired, "complete": t.Complete,
		"unusable": t.Unusable, "steppaid": t.StepPaid, "failed": t.Failed}[out.state]
	if out.message != "" {
		v.Message = t.BadRequest + " " + out.message
	}
	var body bytes.Buffer
	if err := hostedPage.Execute(&body, v); err != nil {
		s.log().ErrorContext(r.Context(), "payments: render hosted page", "err", err)
		http.Error(w, "page unavailable", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	// frame-ancestors is what browsers honour over X-Frame-Options (no
	// clickjacking of the pay button); no-referrer: the URL carries the
	// session ID, which must not leak to another site.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(out.status)
	_, _ = w.Write(body.Bytes()) // the customer's connection; nothing to decide on failure
}
