package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/outcome"
	"github.com/bookonce/bookonce/payments"
)

// Error types of payment activities.
const (
	ErrTypePaymentDeclined = "PaymentDeclined"
	ErrTypePaymentFinal    = "PaymentRejected"
)

// DepositStep is the saga step name stored with the authorisation, so the
// payment API holds one live authorisation per booking step.
const DepositStep = "deposit"

// DepositInput authorises a booking's deposit.
type DepositInput struct {
	Tenant        string `json:"tenant"`
	Reference     string `json:"reference"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	PaymentMethod string `json:"payment_method"`
	Description   string `json:"description"`
}

// IntentInput names a payment intent; with IntentID empty the intent is
// found by the booking reference (a compensation registered before the
// step whose answer may have been lost).
type IntentInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
	IntentID  string `json:"intent_id,omitempty"`
}

// IntentResult is an intent and the step record.
type IntentResult struct {
	Step   Step            `json:"step"`
	Intent payments.Intent `json:"intent"`
	// Found is false when a lookup by reference found nothing.
	Found bool `json:"found"`
	// Authoritative says whether the lookup that set Found proves absence
	// (payments.Gateway.AuthoritativeLookup): the workflow reads the
	// gateway's property here, from the activity's result, so that it
	// replays deterministically and never reads configuration itself.
	Authoritative bool `json:"authoritative,omitempty"`
}

func (a *Activities) gateway(tenant string) (payments.Gateway, error) {
	g, err := a.Payments(tenant)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePaymentFinal, err)
	}
	return g, nil
}

// AuthorizeDeposit places the deposit hold on the card (manual capture).
func (a *Activities) AuthorizeDeposit(ctx context.Context, in DepositInput) (IntentResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return IntentResult{}, err
	}
	key := KeyOf(ctx)
	pi, err := g.Authorize(ctx, key, payments.Authorization{
		Amount: in.Amount, Currency: in.Currency, Reference: in.Reference, Step: DepositStep,
		PaymentMethod: in.PaymentMethod, Description: in.Description,
	})
	if err != nil {
		return IntentResult{}, paymentError("authorize deposit", err)
	}
	traceID(ctx, tracing.PaymentIntentID, pi.ID)
	if pi.Status == payments.StatusRequiresPaymentMethod {
		return IntentResult{}, temporal.NewNonRetryableApplicationError("card declined", ErrTypePaymentDeclined, nil, pi.ID)
	}
	return IntentResult{Step: stepOf(ctx, key, pi.ID), Intent: pi, Found: true}, nil
}

// CaptureDeposit captures the authorised deposit; an already captured
// intent counts as success.
func (a *Activities) CaptureDeposit(ctx context.Context, in IntentInput) (IntentResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	traceID(ctx, tracing.PaymentIntentID, in.IntentID)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return IntentResult{}, err
	}
	key := KeyOf(ctx)
	pi, err := g.Capture(ctx, key, in.IntentID)
	if err != nil {
		return IntentResult{}, paymentError("capture deposit", err)
	}
	return IntentResult{Step: stepOf(ctx, key, pi.ID), Intent: pi, Found: true}, nil
}

// VoidDeposit releases the authorisation (the compensation of
// AuthorizeDeposit). Already voided is success. A deposit that was
// captured after all (a capture whose answer was lost, or one that raced
// a cancellation) is refunded instead: the customer must get the money
// back, once (the refund has its own key, and the payment API refuses
// refunds beyond the capture). With the intent's ID no search is needed;
// without it, "nothing to void" is success only when the lookup is
// authoritative. Against a search that lags writes (Stripe's) it is an
// unknown, retried until the search shows the intent, then a person's.
func (a *Activities) VoidDeposit(ctx context.Context, in IntentInput) (IntentResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	traceID(ctx, tracing.PaymentIntentID, in.IntentID)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return IntentResult{}, err
	}
	key := KeyOf(ctx)
	if in.IntentID != "" {
		pi, err := g.Void(ctx, key, in.IntentID)
		switch {
		case err == nil:
			return IntentResult{Step: stepOf(ctx, key, pi.ID), Intent: pi, Found: true}, nil
		case payments.CodeOf(err) == payments.CodeUnexpectedState:
			// Not voidable: captured (a requires_payment_method or
			// canceled intent is voidable or voided).
			return refundCaptured(ctx, g, payments.Intent{ID: in.IntentID})
		}
		return IntentResult{}, paymentError("void deposit", err)
	}
	pi, found, err := g.FindByReference(ctx, in.Reference, DepositStep)
	if err != nil {
		return IntentResult{}, paymentError("find deposit", err)
	}
	switch {
	case !found && !g.AuthoritativeLookup():
		return IntentResult{}, fmt.Errorf("void deposit: the search, which lags writes, shows no deposit of %s yet: not proven absent", in.Reference)
	case !found:
		return IntentResult{Step: stepOf(ctx, key, "")}, nil
	case pi.Status == payments.StatusRequiresCapture:
		pi, err = g.Void(ctx, key, pi.ID)
		if err != nil {
			return IntentResult{}, paymentError("void deposit", err)
		}
	case pi.Status == payments.StatusSucceeded && pi.AmountRefunded < pi.AmountCaptured:
		return refundCaptured(ctx, g, pi)
	}
	return IntentResult{Step: stepOf(ctx, key, pi.ID), Intent: pi, Found: true}, nil
}

// refundCaptured refunds what is left of the captured deposit pi under
// the activity's refund key; nothing left is success.
func refundCaptured(ctx context.Context, g payments.Gateway, pi payments.Intent) (IntentResult, error) {
	refundKey := SubKey(ctx, "refund")
	r, err := g.Refund(ctx, refundKey, pi.ID, 0)
	if err != nil && payments.CodeOf(err) != payments.CodeChargeAlreadyRefunded {
		return IntentResult{}, paymentError("refund deposit", err)
	}
	return IntentResult{Step: stepOf(ctx, refundKey, r.ID), Intent: pi, Found: true}, nil
}

// RefundDeposit gives a captured deposit back. The key makes a second run
// of the compensation replay the first refund instead of refunding twice.
func (a *Activities) RefundDeposit(ctx context.Context, in IntentInput) (Step, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	traceID(ctx, tracing.PaymentIntentID, in.IntentID)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return Step{}, err
	}
	key := KeyOf(ctx)
	r, err := g.Refund(ctx, key, in.IntentID, 0)
	if err != nil {
		return Step{}, paymentError("refund deposit", err)
	}
	return stepOf(ctx, key, r.ID), nil
}

// FindDeposit reconciles an authorisation whose outcome is unknown by the
// booking reference.
func (a *Activities) FindDeposit(ctx context.Context, in IntentInput) (IntentResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return IntentResult{}, err
	}
	pi, found, err := g.FindByReference(ctx, in.Reference, DepositStep)
	if err != nil {
		return IntentResult{}, paymentError("find deposit", err)
	}
	return IntentResult{Intent: pi, Found: found && pi.Status != payments.StatusRequiresPaymentMethod, Authoritative: g.AuthoritativeLookup()}, nil
}

func paymentError(op string, err error) error {
	var pe *payments.Error
	if !errors.As(err, &pe) || pe.Outcome != outcome.Final {
		return fmt.Errorf("%s: %w", op, err)
	}
	if pe.Code == "card_declined" {
		return temporal.NewNonRetryableApplicationError(pe.Error(), ErrTypePaymentDeclined, err)
	}
	return temporal.NewNonRetryableApplicationError(pe.Error(), ErrTypePaymentFinal, err, pe.Code)
}
