package payments

import (
	"context"
	"time"
)

// CheckoutGateway is the payment-link part of the Gateway port: a
// Checkout Session whose hosted page the customer pays on, and the intent
// that paying creates. Errors are *Error, classified as for Gateway.
type CheckoutGateway interface {
	// CreateCheckout creates an open session for one deposit (manual
	// capture, so paying only authorises).
	CreateCheckout(ctx context.Context, key string, c Checkout) (Session, error)
	// GetCheckout reads a session; an open session past its deadline
	// reads as expired.
	GetCheckout(ctx context.Context, id string) (Session, error)
	// ExpireCheckout closes an open session so that it can no longer be
	// paid. A session that is not open (paid meanwhile, or expired) is a
	// Final error with code CodeSessionUnexpectedState: read it then.
	ExpireCheckout(ctx context.Context, key, id string) (Session, error)
	// GetIntent reads one intent by ID.
	GetIntent(ctx context.Context, id string) (Intent, error)
}

// CodeSessionUnexpectedState is the error code of expiring a session that
// is no longer open (Stripe's and this package's API alike).
const CodeSessionUnexpectedState = "checkout_session_unexpected_state"

// Checkout is a deposit to collect through a payment link.
type Checkout struct {
	// Amount in minor units and Currency (lowercase ISO 4217).
	Amount   int64
	Currency string
	// Reference is the booking's business reference; Step the saga step.
	// Both go to the intent the page creates (its metadata), so the intent
	// is found, voided or refunded by reference like a card deposit.
	Reference, Step string
	// Product is the line item's name, e.g. "Deposit tire change".
	Product string
	// Merchant is shown on the page (the intent's description).
	Merchant string
	// SuccessURL is where the page sends the customer after paying.
	SuccessURL string
	// ExpiresAt is the session's deadline (30 min to 24 h ahead).
	ExpiresAt time.Time
	// Locale of the page: "de", "en" or "" (auto).
	Locale string
}

// Session is a Checkout Session in the app's terms.
type Session struct {
	ID string
	// URL is the hosted page; empty once the session is not open.
	URL string
	// Status is SessionOpen, SessionComplete or SessionExpired.
	Status string
	// PaymentStatus is "unpaid" until the money is captured, then "paid".
	PaymentStatus string
	// IntentID is the intent the first payment attempt created, if any.
	IntentID  string
	ExpiresAt time.Time
}
