package stripeapi

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
)

// Stripe's bounds of a session's expires_at, from its creation.
const (
	MinSessionLifetime = 30 * time.Minute
	MaxSessionLifetime = 24 * time.Hour
)

// sessionObject is a Checkout Session on the wire, decodable as
// stripe.CheckoutSession. url is set only while the session is open, as
// with Stripe.
type sessionObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	AmountSubtotal     int64             `json:"amount_subtotal"`
	AmountTotal        int64             `json:"amount_total"`
	CancelURL          *string           `json:"cancel_url"`
	ClientReferenceID  *string           `json:"client_reference_id"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Customer           *string           `json:"customer"`
	ExpiresAt          int64             `json:"expires_at"`
	Livemode           bool              `json:"livemode"`
	Locale             *string           `json:"locale"`
	Metadata           map[string]string `json:"metadata"`
	Mode               string            `json:"mode"`
	PaymentIntent      *string           `json:"payment_intent"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	PaymentStatus      string            `json:"payment_status"`
	Status             string            `json:"status"`
	SuccessURL         string            `json:"success_url"`
	UIMode             string            `json:"ui_mode"`
	URL                *string           `json:"url"`
	// Fields Stripe sends on every session, always "off" here: no tax,
	// no custom fields or text, no shipping (Stripe's definition requires
	// them, so a client generated from it expects them).
	AutomaticTax    sessionAutomaticTax `json:"automatic_tax"`
	CustomFields    []struct{}          `json:"custom_fields"`
	CustomText      sessionCustomText   `json:"custom_text"`
	ShippingOptions []struct{}          `json:"shipping_options"`
}

// sessionAutomaticTax is a session's automatic_tax, disabled.
type sessionAutomaticTax struct {
	Enabled   bool      `json:"enabled"`
	Liability *struct{} `json:"liability"`
	Provider  *string   `json:"provider"`
	Status    *string   `json:"status"`
}

// sessionCustomText is a session's custom_text, none.
type sessionCustomText struct {
	AfterSubmit              *struct{} `json:"after_submit"`
	ShippingAddress          *struct{} `json:"shipping_address"`
	Submit                   *struct{} `json:"submit"`
	TermsOfServiceAcceptance *struct{} `json:"terms_of_service_acceptance"`
}

// object renders a session. payment_status is "paid" only once the money
// is captured: with capture_method=manual a completed session reports
// "unpaid" while the card is merely authorised, as Stripe's does.
func (r sessionRow) object() *sessionObject {
	o := &sessionObject{
		ID: r.ID, Object: "checkout.session", AmountSubtotal: r.AmountTotal, AmountTotal: r.AmountTotal,
		CancelURL: nullable(r.CancelURL), ClientReferenceID: nullable(r.ClientReferenceID), Created: r.CreatedAt.Unix(),
		Currency: r.Currency, ExpiresAt: r.ExpiresAt.Unix(), Locale: nullable(r.Locale), Metadata: nonNilMap(r.Metadata),
		Mode: "payment", PaymentIntent: nullable(r.PaymentIntentID), PaymentMethodTypes: []string{"card"},
		PaymentStatus: "unpaid", Status: r.Status, SuccessURL: r.SuccessURL, UIMode: "hosted",
		CustomFields: []struct{}{}, ShippingOptions: []struct{}{},
	}
	if r.IntentStatus == payments.StatusSucceeded {
		o.PaymentStatus = "paid"
	}
	if r.Status == payments.SessionOpen {
		o.URL = &r.URL
	}
	return o
}

var createSessionSpec = formSpec{
	scalars: []string{"mode", "success_url", "cancel_url", "client_reference_id", "expires_at", "locale"},
	maps:    []string{"metadata"},
	objects: []string{"payment_intent_data"},
	arrays:  []string{"line_items"},
}

// createSession is POST /v1/checkout/sessions: a payment-mode session
// whose url is the hosted payment page. Nothing is charged until the
// customer pays there.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := s.txOf(w, r)
	if !ok {
		return
	}
	f, apiErr := readForm(r, createSessionSpec)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	now := s.now()
	row, apiErr := validateSession(f, now)
	if apiErr == nil {
		apiErr = checkReference(tenantOf(r), "metadata", row.Metadata)
	}
	if apiErr == nil {
		apiErr = checkReference(tenantOf(r), "payment_intent_data[metadata]", row.IntentMetadata)
	}
	if apiErr == nil {
		apiErr = checkClientReference(tenantOf(r), row.ClientReferenceID)
	}
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	row.ID, row.Tenant, row.Status, row.CreatedAt = newID("cs_test_"), tenantOf(r), payments.SessionOpen, now
	row.URL = s.pageBase(r) + "/pay/" + row.ID
	if err := insertSession(ctx, tx, row); err != nil {
		s.internalError(w, r, "insert checkout session", err)
		return
	}
	idempotency.SetResource(ctx, "checkout.session", row.ID)
	writeJSON(w, http.StatusOK, row.object())
}

// pageBase is where the hosted pages are served: PageBaseURL, or the
// address the API was called on.
func (s *Server) pageBase(r *http.Request) string {
	if s.PageBaseURL != "" {
		return strings.TrimRight(s.PageBaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// validateSession checks the parameters real Stripe requires of a
// payment-mode session and the subset this API supports.
func validateSession(f form, now time.Time) (sessionRow, *apiError) {
	var row sessionRow
	if mode, ok := f.str("mode"); !ok {
		return row, missingParam("mode")
	} else if mode != "payment" {
		return row, invalidRequest("mode", "", "Invalid mode: this API supports mode=payment only.")
	}
	items, currency, total, apiErr := parseLineItems(f.deep)
	if apiErr != nil {
		return row, apiErr
	}
	row.LineItems, row.Currency, row.AmountTotal = items, currency, total
	if row.SuccessURL, apiErr = urlParam(f, "success_url", true); apiErr != nil {
		return row, apiErr
	}
	if row.CancelURL, apiErr = urlParam(f, "cancel_url", false); apiErr != nil {
		return row, apiErr
	}
	if row.ClientReferenceID, _ = f.str("client_reference_id"); len(row.ClientReferenceID) > 200 {
		return row, invalidRequest("client_reference_id", "", "client_reference_id can be at most 200 characters long")
	}
	if row.Locale, apiErr = f.oneOf("locale", "auto", "de", "en"); apiErr != nil {
		apiErr.Message = "Invalid locale: this API supports auto, de and en."
		return row, apiErr
	}
	expires, sent, apiErr := f.integer("expires_at", now.Add(MinSessionLifetime).Unix(), now.Add(MaxSessionLifetime).Unix())
	if apiErr != nil {
		apiErr.Code, apiErr.Message = "", "The Checkout Session's expires_at must be 30 minutes to 24 hours after its creation."
		return row, apiErr
	}
	row.ExpiresAt = now.Add(MaxSessionLifetime) // Stripe's default
	if sent {
		row.ExpiresAt = time.Unix(expires, 0).UTC()
	}
	row.Metadata = f.maps["metadata"]
	return row, intentData(f.deep, &row)
}

func urlParam(f form, name string, required bool) (string, *apiError) {
	v, ok := f.str(name)
	if !ok {
		if required {
			return "", missingParam(name)
		}
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(v) > 5000 {
		return "", invalidRequest(name, "url_invalid", "Not a valid URL")
	}
	return v, nil
}

// Accepted keys of one line item, after "line_items[N]".
const (
	itemCurrency   = "[price_data][currency]"
	itemUnitAmount = "[price_data][unit_amount]"
	itemName       = "[price_data][product_data][name]"
	itemQuantity   = "[quantity]"
)

// parseLineItems reads line_items[0..n] with price_data (a Price object
// by ID does not exist here) and returns them with their one currency and
// total.
func parseLineItems(deep map[string]string) ([]lineItem, string, int64, *apiError) {
	fields := map[int]map[string]string{}
	for key, v := range deep {
		rest, ok := strings.CutPrefix(key, "line_items[")
		if !ok {
			continue
		}
		idx, sub, _ := strings.Cut(rest, "]")
		n, _ := strconv.Atoi(idx) // bindForm checked it is an index
		switch sub = "[" + strings.TrimPrefix(sub, "["); sub {
		case itemCurrency, itemUnitAmount, itemName, itemQuantity:
		case "[price]":
			return nil, "", 0, invalidRequest(key, payments.CodeResourceMissing, "No such price: '"+v+"'; send price_data instead")
		default:
			return nil, "", 0, unknownParam(key)
		}
		if fields[n] == nil {
			fields[n] = map[string]string{}
		}
		fields[n][sub] = v
	}
	if len(fields) == 0 {
		return nil, "", 0, invalidRequest("line_items", payments.CodeParameterMissing, "In payment mode, you must provide at least one line item.")
	}
	var items []lineItem
	var currency string
	var total int64
	for i := range len(fields) {
		it, cur, apiErr := lineItemAt(i, fields[i])
		if apiErr != nil {
			return nil, "", 0, apiErr
		}
		if i > 0 && cur != currency {
			return nil, "", 0, invalidRequest(itemKey(i, itemCurrency), "", "All line items must have the same currency.")
		}
		currency, total = cur, total+it.UnitAmount*it.Quantity
		if total > MaxAmount {
			return nil, "", 0, invalidRequest("line_items", payments.CodeAmountTooLarge, "The total must be at most "+strconv.Itoa(MaxAmount)+".")
		}
		items = append(items, it)
	}
	return items, currency, total, nil
}

func itemKey(i int, sub string) string { return "line_items[" + strconv.Itoa(i) + "]" + sub }

// lineItemAt validates item i, reusing the scalar checks under its full
// parameter names so that errors name what the client sent.
func lineItemAt(i int, m map[string]string) (lineItem, string, *apiError) {
	if m == nil {
		return lineItem{}, "", invalidRequest(itemKey(i, ""), payments.CodeParameterMissing, "line_items must be numbered from 0 without gaps.")
	}
	f := form{scalars: map[string]string{}}
	for sub, v := range m {
		f.scalars[itemKey(i, sub)] = v
	}
	var it lineItem
	var ok bool
	var apiErr *apiError
	if it.UnitAmount, ok, apiErr = f.integer(itemKey(i, itemUnitAmount), 1, MaxAmount); apiErr != nil {
		return it, "", apiErr
	} else if !ok {
		return it, "", missingParam(itemKey(i, itemUnitAmount))
	}
	if it.Quantity, ok, apiErr = f.integer(itemKey(i, itemQuantity), 1, 999); apiErr != nil {
		return it, "", apiErr
	} else if !ok {
		return it, "", missingParam(itemKey(i, itemQuantity))
	}
	if it.Name = m[itemName]; it.Name == "" || len(it.Name) > 250 {
		return it, "", missingParam(itemKey(i, itemName))
	}
	cur := m[itemCurrency]
	if !currencies[cur] {
		return it, "", invalidRequest(itemKey(i, itemCurrency), "", "Invalid currency: "+cur+".")
	}
	return it, cur, nil
}

// intentData reads payment_intent_data: capture_method, description and
// metadata of the PaymentIntent that paying creates.
func intentData(deep map[string]string, row *sessionRow) *apiError {
	row.CaptureMethod = "automatic_async"
	meta := map[string]map[string]string{}
	for key, v := range deep {
		sub, ok := strings.CutPrefix(key, "payment_intent_data[")
		if !ok {
			continue
		}
		switch {
		case sub == "capture_method]":
			f := form{scalars: map[string]string{key: v}}
			if _, apiErr := f.oneOf(key, "manual", "automatic", "automatic_async"); apiErr != nil {
				return apiErr
			}
			row.CaptureMethod = v
		case sub == "description]":
			if len(v) > 1000 {
				return invalidRequest(key, "", "description can be at most 1000 characters long")
			}
			row.Description = v
		case strings.HasPrefix(sub, "metadata][") && strings.Count(sub, "]") == 2:
			k := strings.TrimSuffix(strings.TrimPrefix(sub, "metadata]["), "]")
			if err := addMapEntry(meta, formField{raw: key, path: []string{"metadata", k}, value: v}); err != nil {
				return err
			}
		default:
			return unknownParam(key)
		}
	}
	row.IntentMetadata = meta["metadata"]
	return nil
}

// sessionLookupFailed answers a failed read of the session in the path
// (404 resource_missing, or 500) and reports whether it did.
func (s *Server) sessionLookupFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, errNotFound):
		writeError(r.Context(), w, &apiError{status: http.StatusNotFound, Type: typeInvalidRequest, Code: payments.CodeResourceMissing,
			Param: "session", Message: "No such checkout.session: '" + r.PathValue("id") + "'"})
		return true
	case err != nil:
		s.internalError(w, r, "read checkout session", err)
		return true
	}
	return false
}

// getSession is GET /v1/checkout/sessions/{id}; an open session past its
// expires_at is expired on the way (lazy expiry).
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if _, apiErr := readQuery(r, formSpec{}); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	row, err := getSession(ctx, s.Pool, tenantOf(r), r.PathValue("id"), false)
	if err == nil {
		row, err = refreshExpiry(ctx, s.Pool, row, s.now())
	}
	if s.sessionLookupFailed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, row.object())
}

// expireSession is POST /v1/checkout/sessions/{id}/expire: an open
// session can no longer be paid, and checkout.session.expired is sent.
func (s *Server) expireSession(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := s.txOf(w, r)
	if !ok {
		return
	}
	if _, apiErr := readForm(r, formSpec{}); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	row, err := getSession(ctx, tx, tenantOf(r), r.PathValue("id"), true)
	if s.sessionLookupFailed(w, r, err) {
		return
	}
	if row.Status != payments.SessionOpen {
		writeError(ctx, w, &apiError{status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest,
			Code: "checkout_session_unexpected_state", Message: "Only Checkout Sessions with a status in [\"open\"] can be expired. This session has a status of " + row.Status + "."})
		return
	}
	if err := expireSession(ctx, tx, &row, sourceOf(r), s.now()); err != nil {
		s.internalError(w, r, "expire checkout session", err)
		return
	}
	idempotency.SetResource(ctx, "checkout.session", row.ID)
	writeJSON(w, http.StatusOK, row.object())
}
