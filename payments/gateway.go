package payments

import (
	"context"
	"time"
)

// Gateway is the application's payment port: what a booking saga needs
// from a payment provider, in its own terms. Every mutating call takes the
// caller's idempotency key, derived from the activity execution (rule 8);
// a retry of the same operation must pass the same key, a new operation a
// new one. Implementations never invent keys.
//
// All methods return *Error on failure; outcome.Of tells the caller whether
// to retry with the same key (Retryable), give up (Final), or reconcile
// (Unknown: the effect may have happened — retry with the same key or look
// the intent up with FindByReference, never re-send with a new key).
type Gateway interface {
	// Authorize places a hold on the customer's card for a deposit
	// (manual capture). A decline is a Final error with code card_declined.
	Authorize(ctx context.Context, key string, a Authorization) (Intent, error)
	// Capture takes the full authorised amount. Capturing an intent that
	// is already captured succeeds with the current intent.
	Capture(ctx context.Context, key, intentID string) (Intent, error)
	// Void releases an authorisation. Voiding an intent that is already
	// canceled succeeds with the current intent; a captured intent cannot
	// be voided (Final payment_intent_unexpected_state: refund instead).
	Void(ctx context.Context, key, intentID string) (Intent, error)
	// Refund returns captured money; amount 0 refunds all that is left.
	Refund(ctx context.Context, key, intentID string, amount int64) (Refund, error)
	// FindByReference returns the intent of a booking step, preferring a
	// live authorisation (requires_capture or succeeded) over declined or
	// canceled attempts; found is false when there is none.
	FindByReference(ctx context.Context, reference, step string) (intent Intent, found bool, err error)
	// AuthoritativeLookup reports whether FindByReference is consistent
	// with the provider's writes, so that "not found" after an unknown
	// outcome proves that nothing happened. Only then may a caller retry
	// under a new key. Against a provider whose search lags (Stripe's
	// index trails writes), a caller keeps retrying with the same key
	// within the provider's key retention and then asks a person.
	AuthoritativeLookup() bool
	// CheckoutGateway: payment links (Checkout Sessions).
	CheckoutGateway
}

// Authorization is a deposit to authorise. The tenant is not part of it:
// it follows from the gateway's secret key.
type Authorization struct {
	// Amount in the currency's minor unit (cents), 1..MaxAmount.
	Amount int64
	// Currency is a lowercase ISO 4217 code, e.g. "eur".
	Currency string
	// Reference is the booking's business reference (its workflow ID) and
	// Step the saga step ("deposit"); together they identify the
	// authorisation across idempotency keys.
	Reference, Step string
	// PaymentMethod is the card to charge (a Stripe PaymentMethod ID; in
	// tests pm_card_visa or pm_card_chargeDeclined).
	PaymentMethod string
	// Customer is an optional Stripe customer ID (cus_...), not our own
	// customer reference: real Stripe rejects unknown customers.
	Customer string
	// Description is shown to the merchant, e.g. "Deposit tire change".
	Description string
}

// Intent is the state of a payment intent, in the app's terms.
type Intent struct {
	ID string
	// Status is one of the Status* constants.
	Status         string
	Amount         int64
	AmountCaptured int64
	// AmountRefunded is captured money returned by refunds (not an
	// authorisation released by a void).
	AmountRefunded int64
	Currency       string
	Reference      string
	Step           string
	// Created is when the provider created the intent (second precision).
	Created time.Time
}

// Refund is a completed refund.
type Refund struct {
	ID     string
	Status string
	Amount int64
}
