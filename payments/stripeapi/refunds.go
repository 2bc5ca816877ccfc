package stripeapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/payments"
)

var createRefundSpec = formSpec{
	scalars: []string{"payment_intent", "charge", "amount", "reason"},
	maps:    []string{"metadata"},
}

// createRefund refunds captured money of a succeeded intent, by default
// all that is not refunded yet. The intent row is locked, so concurrent
// refunds of one intent are decided one after the other on exact numbers,
// and the schema's CHECK (refunded <= captured) is the last line.
//
// Refusals that depend on the intent's state (not succeeded, fully
// refunded, more than what is left) are decided outcomes and are stored
// with the key; malformed input is not.
func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, ok := s.txOf(w, r)
	if !ok {
		return
	}
	f, apiErr := readForm(r, createRefundSpec)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	req, apiErr := readRefund(f)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	tenant := tenantOf(r)
	row, apiErr, err := lockRefunded(ctx, tx, tenant, req)
	switch {
	case apiErr != nil:
		writeError(ctx, w, apiErr)
		return
	case err != nil:
		s.internalError(w, r, "read payment intent", err)
		return
	}
	amount, left, apiErr := refundAmount(row, req)
	if apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}

	ref := refundRow{
		ID: newID("re_"), PaymentIntentID: row.ID, ChargeID: row.ChargeID, Amount: amount, Currency: row.Currency,
		Status: "succeeded", Reason: req.reason, Metadata: f.maps["metadata"], CreatedAt: s.now(),
	}
	if err := addRefund(ctx, tx, tenant, ref); err != nil {
		if code, name := constraintViolation(err); code == "23514" && name == constraintRefundedCaptured {
			// Unreachable while the row lock holds; kept as the answer the
			// schema would force anyway.
			writeError(ctx, w, refundTooLarge(row, amount, left))
			return
		}
		s.internalError(w, r, "insert refund", err)
		return
	}
	row.AmountRefunded += amount
	if err := s.emit(r, tx, EventChargeRefunded, row.ChargeID, row.charge()); err != nil {
		s.internalError(w, r, "record refund event", err)
		return
	}
	idempotency.SetResource(ctx, "refund", ref.ID)
	writeJSON(w, http.StatusOK, ref.object())
}

// refundRequest is a create-refund form, checked for shape.
type refundRequest struct {
	piID, chID string
	byIntent   bool // the refund names payment_intent, not charge
	amount     int64
	amountSent bool
	reason     string
}

// readRefund checks a create-refund form: exactly one of payment_intent
// and charge, an amount in range and a known reason. These refusals are
// malformed input, not stored with the key.
func readRefund(f form) (refundRequest, *apiError) {
	var req refundRequest
	var byCharge bool
	req.piID, req.byIntent = f.str("payment_intent")
	req.chID, byCharge = f.str("charge")
	switch {
	case !req.byIntent && !byCharge:
		return refundRequest{}, missingParam("payment_intent")
	case req.byIntent && byCharge:
		return refundRequest{}, invalidRequest("charge", "parameters_exclusive", "Send either payment_intent or charge, not both.")
	}
	var apiErr *apiError
	if req.amount, req.amountSent, apiErr = f.integer("amount", 1, MaxAmount); apiErr != nil {
		return refundRequest{}, apiErr
	}
	if req.reason, apiErr = f.oneOf("reason", "duplicate", "fraudulent", "requested_by_customer"); apiErr != nil {
		return refundRequest{}, apiErr
	}
	return req, nil
}

// lockRefunded reads and locks the intent the refund names, by
// payment_intent or by charge. An unknown one is an *apiError; a failed
// read is a plain error.
func lockRefunded(ctx context.Context, tx pgx.Tx, tenant string, req refundRequest) (intentRow, *apiError, error) {
	var row intentRow
	var err error
	if req.byIntent {
		row, err = getIntent(ctx, tx, tenant, req.piID, true)
	} else {
		row, err = getIntentByCharge(ctx, tx, tenant, req.chID)
	}
	switch {
	case errors.Is(err, errNotFound) && req.byIntent:
		return intentRow{}, noSuchIntent(http.StatusBadRequest, "payment_intent", req.piID), nil
	case errors.Is(err, errNotFound):
		return intentRow{}, invalidRequest("charge", payments.CodeResourceMissing, "No such charge: '"+req.chID+"'"), nil
	case err != nil:
		return intentRow{}, nil, err
	}
	return row, nil, nil
}

// refundAmount decides how much of the intent's captured money the
// refund takes (all that is left unless an amount was sent) and returns
// it with what was left. Refusals here depend on the intent's state and
// are decided outcomes, stored with the key.
func refundAmount(row intentRow, req refundRequest) (amount, left int64, apiErr *apiError) {
	if row.Status != payments.StatusSucceeded {
		e := unexpectedState(row.object(false), "refund", "refunded: succeeded")
		e.Param = "payment_intent"
		return 0, 0, e
	}
	left = row.AmountCaptured - row.AmountRefunded
	if left == 0 {
		return 0, 0, &apiError{status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest,
			Code: payments.CodeChargeAlreadyRefunded, Charge: row.ChargeID, Message: "Charge " + row.ChargeID + " has already been refunded."}
	}
	if !req.amountSent {
		return left, left, nil
	}
	if req.amount > left {
		return 0, 0, refundTooLarge(row, req.amount, left)
	}
	return req.amount, left, nil
}

func refundTooLarge(row intentRow, amount, left int64) *apiError {
	return &apiError{status: http.StatusBadRequest, keep: true, Type: typeInvalidRequest, Code: payments.CodeAmountTooLarge,
		Param: "amount", Charge: row.ChargeID,
		Message: "Refund amount (" + strconv.FormatInt(amount, 10) + " " + row.Currency +
			") is greater than unrefunded amount on charge (" + strconv.FormatInt(left, 10) + " " + row.Currency + ")"}
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if _, apiErr := readQuery(r, formSpec{}); apiErr != nil {
		writeError(ctx, w, apiErr)
		return
	}
	ref, err := getRefund(ctx, s.Pool, tenantOf(r), r.PathValue("id"))
	if errors.Is(err, errNotFound) {
		writeError(ctx, w, &apiError{status: http.StatusNotFound, Type: typeInvalidRequest, Code: payments.CodeResourceMissing,
			Param: "id", Message: "No such refund: '" + r.PathValue("id") + "'"})
		return
	} else if err != nil {
		s.internalError(w, r, "read refund", err)
		return
	}
	writeJSON(w, http.StatusOK, ref.object())
}
