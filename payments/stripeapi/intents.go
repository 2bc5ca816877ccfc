package stripeapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/reference"
)

// MaxAmount is the largest amount in minor units, Stripe's eight digits.
const MaxAmount = 99999999

// currencies are the ISO 4217 codes the API accepts, lowercase as Stripe
// writes them. The amount is always in the currency's minor unit (cents;
// whole yen for zero-decimal jpy), as with Stripe.
var currencies = map[string]bool{
	"eur": true, "usd": true, "gbp": true, "chf": true, "sek": true, "nok": true, "dkk": true, "pln": true,
	"czk": true, "huf": true, "ron": true, "bgn": true, "cad": true, "aud": true, "nzd": true, "jpy": true,
}

// decline is the answer of a test card that fails.
type decline struct{ code, declineCode, message string }

// testCards are Stripe's test PaymentMethod tokens this API knows. A nil
// decline authorises. Unknown tokens answer resource_missing, as Stripe does
// for a PaymentMethod that does not exist.
var testCards = map[string]*decline{
	"pm_card_visa":                            nil,
	"pm_card_visa_debit":                      nil,
	"pm_card_mastercard":                      nil,
	"pm_card_amex":                            nil,
	"pm_card_chargeDeclined":                  {payments.CodeCardDeclined, "generic_decline", "Your card was declined."},
	"pm_card_chargeDeclinedInsufficientFunds": {payments.CodeCardDeclined, "insufficient_funds", "Your card has insufficient funds."},
	"pm_card_chargeDeclinedExpiredCard":       {"expired_card", "expired_card", "Your card has expired."},
}

var createIntentSpec = formSpec{
	scalars: []string{"amount", "currency", "capture_method", "confirm", "payment_method", "customer", "description"},
	maps:    []string{"metadata"},
	lists:   []string{"expand"},
}

// validateCreate turns the form into the row to insert, or the first
// problem Stripe would name. Nothing is written before it passes.
func validateCreate(f form) (intentRow, bool, *apiError) {
	var row intentRow
	amount, ok, err := f.integer("amount", 1, MaxAmount)
	if err != nil {
		return row, false, err
	} else if !ok {
		return row, false, missingParam("amount")
	}
	cur, ok := f.str("currency")
	if !ok {
		return row, false, missingParam("currency")
	}
	if !currencies[cur] {
		return row, false, invalidRequest("currency", "", "Invalid currency: "+cur+". Supported: eur, usd, gbp, chf and other ISO 4217 codes in lowercase.")
	}
	method, err := f.oneOf("capture_method", "manual", "automatic", "automatic_async")
	if err != nil {
		return row, false, err
	}
	if method == "" {
		method = "automatic_async" // Stripe's default; deposits must ask for manual
	}
	confirm, _, err := f.boolean("confirm")
	if err != nil {
		return row, false, err
	}
	pm, _ := f.str("payment_method")
	if confirm && pm == "" {
		return row, false, missingParam("payment_method")
	}
	if _, known := testCards[pm]; pm != "" && !known {
		return row, false, unusableCard(pm)
	}
	customer, _ := f.str("customer")
	if customer != "" && !strings.HasPrefix(customer, "cus_") {
		return row, false, invalidRequest("customer", payments.CodeResourceMissing, "No such customer: '"+customer+"'")
	}
	desc, _ := f.str("description")
	if len(desc) > 1000 {
		return row, false, invalidRequest("description", "", "description can be at most 1000 characters long")
	}
	return intentRow{
		Amount: amount, Currency: cur, CaptureMethod: method, PaymentMethod: pm, Customer: customer,
		Description: desc, Metadata: f.maps["metadata"],
	}, confirm, nil
}

// checkReference refuses a booking_reference in a namespace bookonce
// reserves for another tenant: the reference leads webhooks, the
// reconciler and lookups to a workflow, so a tenant may name only its own
// (reference.CheckStored); param is the map's form name.
func checkReference(tenant, param string, metadata map[string]string) *apiError {
	ref, ok := metadata[payments.MetadataReference]
	if !ok {
		return nil
	}
	if err := reference.CheckStored(tenant, ref); err != nil {
		return invalidRequest(param+"["+payments.MetadataReference+"]", "", err.Error())
	}
	return nil
}

// checkClientReference refuses a session's client_reference_id in
// another tenant's namespace, as checkReference a booking_reference: the
// gateway reads it as the booking's reference when the metadata has none.
func checkClientReference(tenant, ref string) *apiError {
	if err := reference.CheckStored(tenant, ref); err != nil {
		return invalidRequest("client_reference_id", "", err.Error())
	}
	return nil
}

// mutation starts a mutating intent request: the idempotency transaction,
// the form checked against spec, and the expand list; false means the
// answer was written.
func (s *Server) mutation(w http.ResponseWriter, r *http.Request, spec formSpec) (pgx.Tx, form, map[string]bool, bool) {
	tx, ok := s.txOf(w, r)
	if !ok {
		return nil, form{}, nil, false
	}
	f, apiErr := readForm(r, spec)
	if apiErr == nil {
		var expand map[string]bool
		if expand, apiErr = f.expand("latest_charge"); apiErr == nil {
			return tx, f, expand, true
		}
	}
	writeError(r.Context(), w, apiErr)
	return nil, form{}, nil, false
}

// createIntent creates and confirms a PaymentIntent: manual capture
// authorises (requires_capture), automatic capture charges (succeeded), a
// declining test card answers 402 card_error, which is a decided outcome
// and stored with the key like a success.
func (s *Server) createIntent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, f, expand, ok := s.mutation(w, r, createIntentSpec)
	if !ok {
		return
	}
	row, confirm, apiErr := validateCreate(f)
	if apiErr == nil {
		apiErr = checkReference(tenantOf(r), "metadata", row.Metadata)
	}
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	if !confirm {
		s.createUnconfirmed(w, r, tx, row, expand["latest_charge"])
		return
	}
	tenant := tenantOf(r)
	ref, hasRef := row.Metadata[payments.MetadataReference]
	step := row.Metadata[payments.MetadataStep]
	// The booking step guards a caller whose key changed (a reset
	// workflow): an equal request gets the intent that already exists.
	if hasRef {
		if existing, err := liveAuthorisation(ctx, tx, tenant, ref, step); err == nil {
			s.answerExisting(w, r, existing, row, expand["latest_charge"])
			return
		} else if !errors.Is(err, errNotFound) {
			s.internalError(w, r, "look up booking reference", err)
			return
		}
	}

	now := s.now()
	row.ID, row.CreatedAt = newID("pi_"), now
	d, capturedAt := confirmNew(&row, now)
	if err := insertIntent(ctx, tx, tenant, row, capturedAt); err != nil {
		if code, name := constraintViolation(err); code == "23505" && name == constraintOneAuthorisation {
			// A concurrent request with another key won the booking step
			// and has committed (the index waited for it): answer that one.
			if existing, err := liveAuthorisation(ctx, tx, tenant, ref, step); err == nil {
				s.answerExisting(w, r, existing, row, expand["latest_charge"])
				return
			}
		}
		s.internalError(w, r, "insert payment intent", err)
		return
	}
	if err := s.emit(r, tx, createdEvent(row.Status), row.ID, row.object(false)); err != nil {
		s.internalError(w, r, "record payment intent event", err)
		return
	}
	idempotency.SetResource(ctx, "payment_intent", row.ID)
	if d != nil {
		writeError(ctx, w, &apiError{status: http.StatusPaymentRequired, keep: true, Type: typeCard,
			Code: d.code, DeclineCode: d.declineCode, Message: d.message, PaymentIntent: row.object(expand["latest_charge"])})
		return
	}
	writeJSON(w, http.StatusOK, row.object(expand["latest_charge"]))
}

// confirmNew applies what confirming does to a new intent with its test
// card: a decline leaves it requiring a payment method, manual capture
// authorises, automatic capture charges. It returns the decline (nil if
// the card authorises) and the capture time to store (nil unless charged).
func confirmNew(row *intentRow, now time.Time) (*decline, *time.Time) {
	d := testCards[row.PaymentMethod]
	switch {
	case d != nil:
		// Stripe keeps the declined intent, detached from the card.
		row.Status, row.PaymentMethod = payments.StatusRequiresPaymentMethod, ""
		row.LastPaymentError, _ = json.Marshal(map[string]string{
			"type": typeCard, "code": d.code, "decline_code": d.declineCode, "message": d.message})
		return d, nil
	case row.CaptureMethod == "manual":
		row.Status, row.ChargeID = payments.StatusRequiresCapture, newID("ch_")
		return nil, nil
	default:
		row.Status, row.ChargeID, row.AmountCaptured = payments.StatusSucceeded, newID("ch_"), row.Amount
		return nil, &now
	}
}

// LayerReference is the layer label under which bookonce_duplicates_blocked_total
// counts creates stopped by the booking-step guard rather than by their key.
const LayerReference = "payment_reference"

// answerExisting answers a create whose booking step is already
// authorised: the same amount and currency is the same business intent
// (200 with the existing intent), anything else is a conflict that must not
// be papered over.
func (s *Server) answerExisting(w http.ResponseWriter, r *http.Request, existing, req intentRow, expandCharge bool) {
	// Rule 12: a duplicate that got past the idempotency key is the early
	// warning that some caller changed its key for the same operation.
	s.Idempotency.Metrics().DuplicatesBlocked.WithLabelValues(LayerReference, tenantOf(r), OpCreateIntent).Inc()
	s.log().InfoContext(r.Context(), "payments: booking step already authorised",
		"intent", existing.ID, "reference", existing.Metadata[payments.MetadataReference], "step", existing.Metadata[payments.MetadataStep])
	if existing.Amount != req.Amount || existing.Currency != req.Currency {
		writeError(r.Context(), w, &apiError{
			status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest, Code: payments.CodeReferenceConflict,
			Param: "metadata[" + payments.MetadataReference + "]",
			Message: "booking_reference " + existing.Metadata[payments.MetadataReference] + " (step " + existing.Metadata[payments.MetadataStep] +
				") is already authorised by " + existing.ID + " for another amount or currency",
		})
		return
	}
	answerIntent(r.Context(), w, existing, expandCharge)
}

var expandSpec = formSpec{lists: []string{"expand"}}

func (s *Server) getIntent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, apiErr := readQuery(r, expandSpec)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	expand, apiErr := f.expand("latest_charge")
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	row, err := getIntent(ctx, s.Pool, tenantOf(r), r.PathValue("id"), false)
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, noSuchIntent(http.StatusNotFound, "intent", r.PathValue("id")))
		return
	} else if err != nil {
		s.internalError(w, r, "read payment intent", err)
		return
	}
	writeJSON(w, http.StatusOK, row.object(expand["latest_charge"]))
}

var captureSpec = formSpec{scalars: []string{"amount_to_capture"}, lists: []string{"expand"}}

// captureIntent captures an authorised intent, fully or partially; the
// rest of the authorisation is released, as with Stripe.
func (s *Server) captureIntent(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, captureSpec, func(tx pgx.Tx, f form, row *intentRow) *apiError {
		if row.Status != payments.StatusRequiresCapture {
			return unexpectedState(row.object(false), "capture", "captured: requires_capture")
		}
		amount, sent, apiErr := f.integer("amount_to_capture", 1, MaxAmount)
		if apiErr != nil {
			return apiErr
		}
		if !sent {
			amount = row.Amount
		} else if amount > row.Amount {
			return invalidRequest("amount_to_capture", payments.CodeAmountTooLarge,
				"The amount to capture must be less than or equal to the PaymentIntent's amount_capturable.")
		}
		now := s.now()
		if err := captureIntent(r.Context(), tx, tenantOf(r), row.ID, amount, now); err != nil {
			return s.failed(r, "capture payment intent", err)
		}
		row.Status, row.AmountCaptured = payments.StatusSucceeded, amount
		if err := s.emit(r, tx, EventIntentSucceeded, row.ID, row.object(false)); err != nil {
			return s.failed(r, "record capture event", err)
		}
		return nil
	})
}

var cancelSpec = formSpec{scalars: []string{"cancellation_reason"}, lists: []string{"expand"}}

// cancelIntent voids an authorisation (or a declined intent).
func (s *Server) cancelIntent(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, cancelSpec, func(tx pgx.Tx, f form, row *intentRow) *apiError {
		reason, apiErr := f.oneOf("cancellation_reason", "duplicate", "fraudulent", "requested_by_customer", "abandoned")
		if apiErr != nil {
			return apiErr
		}
		if row.Status != payments.StatusRequiresCapture && !confirmable(row.Status) {
			return unexpectedState(row.object(false), "cancellation",
				"canceled: requires_payment_method, requires_confirmation, requires_action, requires_capture")
		}
		now := s.now()
		if err := cancelIntent(r.Context(), tx, tenantOf(r), row.ID, reason, now); err != nil {
			return s.failed(r, "cancel payment intent", err)
		}
		row.Status, row.CancellationReason, row.CanceledAt = payments.StatusCanceled, reason, &now
		if err := s.emit(r, tx, EventIntentCanceled, row.ID, row.object(false)); err != nil {
			return s.failed(r, "record cancel event", err)
		}
		return nil
	})
}

// transition runs a state change on the intent named in the path, locked
// for the rest of the request so that a concurrent capture and cancel of
// one intent are decided one after the other.
func (s *Server) transition(w http.ResponseWriter, r *http.Request, spec formSpec, change func(pgx.Tx, form, *intentRow) *apiError) {
	ctx := r.Context()
	tx, f, expand, ok := s.mutation(w, r, spec)
	if !ok {
		return
	}
	id := r.PathValue("id")
	row, err := getIntent(ctx, tx, tenantOf(r), id, true)
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, noSuchIntent(http.StatusNotFound, "intent", id))
		return
	} else if err != nil {
		s.internalError(w, r, "read payment intent", err)
		return
	}
	if apiErr := change(tx, f, &row); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	answerIntent(ctx, w, row, expand["latest_charge"])
}
