package stripeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/payments"
)

// Statuses of an intent that is not confirmed yet (Stripe's names).
const (
	StatusRequiresConfirmation = "requires_confirmation"
	StatusRequiresAction       = "requires_action"
)

// cardAuthenticationRequired is Stripe's test card that asks for 3-D
// Secure. Only the hosted payment page can answer the challenge, so the API
// does not accept it (testCards has no entry).
const cardAuthenticationRequired = "pm_card_authenticationRequired"

// unusableCard is the error for a payment method the API cannot charge:
// the 3-D Secure card exists at Stripe, so it is not "No such
// PaymentMethod" (which would tell a client to drop it), only not payable
// here; any other unknown one is resource_missing, as at Stripe.
func unusableCard(pm string) *apiError {
	if pm == cardAuthenticationRequired {
		return invalidRequest("payment_method", "", pm+" asks for 3-D Secure, which this API answers only on the hosted payment page: create a Checkout Session")
	}
	return invalidRequest("payment_method", payments.CodeResourceMissing, "No such PaymentMethod: '"+pm+"'")
}

// authenticationFailed is the decline of a denied 3-D Secure challenge.
var authenticationFailed = &decline{"payment_intent_authentication_failure", "",
	"The provided PaymentMethod has failed authentication. Provide a new payment method to attempt to fulfill this PaymentIntent again."}

// errStepAuthorised is a confirmation refused by the one-authorisation
// index: the booking step is already authorised by another intent.
var errStepAuthorised = errors.New("booking step already authorised by another intent")

// confirmable reports whether an intent may be confirmed (with a new card).
func confirmable(status string) bool {
	return status == payments.StatusRequiresPaymentMethod || status == StatusRequiresConfirmation || status == StatusRequiresAction
}

// settleCard confirms the locked intent row with card pm, whose test
// outcome is d (nil: authorised), and records the event Stripe sends for
// the result, in tx: a decline detaches the card (requires_payment_method
// with last_payment_error), manual capture authorises (requires_capture),
// automatic capture charges (succeeded). The hosted page and
// POST /v1/payment_intents/{id}/confirm both go through here.
func settleCard(ctx context.Context, tx pgx.Tx, tenant string, row *intentRow, pm string, d *decline, src eventSource, now time.Time) error {
	next := *row
	next.LastPaymentError, next.ChargeID, next.AmountCaptured = nil, "", 0
	var capturedAt *time.Time
	event := EventAmountCapturableUpdated
	switch {
	case d != nil:
		next.Status, next.PaymentMethod, event = payments.StatusRequiresPaymentMethod, "", EventIntentPaymentFailed
		lpe, err := json.Marshal(map[string]string{"type": typeCard, "code": d.code, "decline_code": d.declineCode, "message": d.message})
		if err != nil {
			return err
		}
		next.LastPaymentError = lpe
	case next.CaptureMethod == "manual":
		next.Status, next.PaymentMethod, next.ChargeID = payments.StatusRequiresCapture, pm, newID("ch_")
	default:
		next.Status, next.PaymentMethod, next.ChargeID, next.AmountCaptured = payments.StatusSucceeded, pm, newID("ch_"), next.Amount
		capturedAt, event = &now, EventIntentSucceeded
	}
	if err := updateConfirmed(ctx, tx, tenant, next, capturedAt); err != nil {
		return err
	}
	*row = next
	return recordEvent(ctx, tx, tenant, event, row.ID, row.object(false), src, now)
}

// updateConfirmed writes a confirmation in a savepoint, so that the
// one-authorisation index refusing it leaves tx usable.
func updateConfirmed(ctx context.Context, tx pgx.Tx, tenant string, r intentRow, capturedAt *time.Time) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = sp.Exec(ctx, `UPDATE payment_intents SET status = $3, payment_method = nullif($4, ''), charge_id = nullif($5, ''),
		amount_captured = $6, last_payment_error = $7, captured_at = $8 WHERE tenant_id = $1 AND id = $2`,
		tenant, r.ID, r.Status, r.PaymentMethod, r.ChargeID, r.AmountCaptured, r.LastPaymentError, capturedAt)
	if err != nil {
		_ = sp.Rollback(ctx) // the savepoint's own failure adds nothing to err
		if code, name := constraintViolation(err); code == "23505" && name == constraintOneAuthorisation {
			return fmt.Errorf("confirm %s: %w", r.ID, errStepAuthorised)
		}
		return err
	}
	return sp.Commit(ctx)
}

// requireAction parks an intent on a 3-D Secure challenge.
func requireAction(ctx context.Context, q querier, tenant string, row *intentRow, pm string) error {
	if _, err := q.Exec(ctx, `UPDATE payment_intents SET status = 'requires_action', payment_method = $3, last_payment_error = NULL
		WHERE tenant_id = $1 AND id = $2`, tenant, row.ID, pm); err != nil {
		return err
	}
	row.Status, row.PaymentMethod, row.LastPaymentError = StatusRequiresAction, pm, nil
	return nil
}

var confirmSpec = formSpec{scalars: []string{"payment_method"}, lists: []string{"expand"}}

// confirmIntent is POST /v1/payment_intents/{id}/confirm: an intent
// created without confirm=true is confirmed with its own or the given
// card. A decline answers 402 card_error, stored with the key like the
// decline of a create.
func (s *Server) confirmIntent(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, confirmSpec, func(tx pgx.Tx, f form, row *intentRow) *apiError {
		if !confirmable(row.Status) {
			return unexpectedState(row.object(false), "confirmation", "confirmed: requires_payment_method, requires_confirmation, requires_action")
		}
		pm, sent := f.str("payment_method")
		if !sent || pm == "" {
			pm = row.PaymentMethod
		}
		if pm == "" {
			return missingParam("payment_method")
		}
		d, known := testCards[pm]
		if !known {
			return unusableCard(pm)
		}
		err := settleCard(r.Context(), tx, tenantOf(r), row, pm, d, sourceOf(r), s.now())
		if errors.Is(err, errStepAuthorised) {
			return &apiError{status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest, Code: payments.CodeReferenceConflict,
				Param: "metadata[" + payments.MetadataReference + "]", Message: "booking_reference " + row.Metadata[payments.MetadataReference] +
					" (step " + row.Metadata[payments.MetadataStep] + ") is already authorised by another PaymentIntent"}
		} else if err != nil {
			return s.failed(r, "confirm payment intent", err)
		}
		if d != nil {
			return &apiError{status: http.StatusPaymentRequired, keep: true, Type: typeCard, Code: d.code,
				DeclineCode: d.declineCode, Message: d.message, PaymentIntent: row.object(false)}
		}
		return nil
	})
}

// createdEvent is the event of an intent confirmed on create.
func createdEvent(status string) string {
	switch status {
	case payments.StatusRequiresCapture:
		return EventAmountCapturableUpdated
	case payments.StatusSucceeded:
		return EventIntentSucceeded
	}
	return EventIntentPaymentFailed
}

// createUnconfirmed creates an intent without confirming it, as Stripe
// does without confirm=true: requires_confirmation when a card is given,
// requires_payment_method otherwise. It authorises nothing, so the
// booking-step guard does not apply until the confirmation.
func (s *Server) createUnconfirmed(w http.ResponseWriter, r *http.Request, tx pgx.Tx, row intentRow, expandCharge bool) {
	row.ID, row.CreatedAt, row.Status = newID("pi_"), s.now(), payments.StatusRequiresPaymentMethod
	if row.PaymentMethod != "" {
		row.Status = StatusRequiresConfirmation
	}
	if err := insertIntent(r.Context(), tx, tenantOf(r), row, nil); err != nil {
		s.internalError(w, r, "insert payment intent", err)
		return
	}
	answerIntent(r.Context(), w, row, expandCharge)
}
