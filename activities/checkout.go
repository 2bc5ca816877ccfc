package activities

import (
	"context"
	"time"

	"github.com/bookonce/bookonce/payments"
)

// Outbox kinds of the payment-link messages: one of each per booking.
const (
	// MessageKindPaymentLink carries the link to pay the deposit.
	MessageKindPaymentLink = "payment_link"
	// MessageKindPaymentExpired tells the customer the link lapsed and
	// the slot was released.
	MessageKindPaymentExpired = "payment_expired"
	// MessageKindPaymentLateRefund tells the customer a payment that
	// arrived after the booking was given up was released or refunded.
	MessageKindPaymentLateRefund = "payment_late_refund"
	// MessageKindPaymentUnavailable tells the customer no payment link
	// could be made (the provider was down too long): nothing booked.
	MessageKindPaymentUnavailable = "payment_unavailable"
)

// defaultReturnURL is where the page sends a payer when the worker has no
// PaymentReturnURL (a development setup): the page itself must get some
// URL, and one on the example domain harms nobody.
const defaultReturnURL = "https://example.com/paid"

// PaymentLinkInput asks for a payment link (Checkout Session) for a
// booking's deposit.
type PaymentLinkInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	// Product names the line item, e.g. "Deposit tire change".
	Product string `json:"product"`
	// Merchant is shown on the page.
	Merchant string `json:"merchant"`
	// ExpiresAt is the link's deadline, fixed by the workflow so that a
	// retry sends the same parameters under the same key.
	ExpiresAt time.Time `json:"expires_at"`
	// Locale of the page: "de", "en" or "".
	Locale string `json:"locale,omitempty"`
}

// LinkInput names a payment link.
type LinkInput struct {
	Tenant    string `json:"tenant"`
	SessionID string `json:"session_id"`
}

// The states of a payment link's session as PaymentLinkResult reports
// them (Session.Status, Stripe's names), so the deposit saga reads them
// without the payment package.
const (
	SessionOpen    = payments.SessionOpen
	SessionExpired = payments.SessionExpired
)

// PaymentLinkResult is a session as the provider reports it, with its
// intent when one exists (HasIntent), and the step record.
type PaymentLinkResult struct {
	Step      Step             `json:"step"`
	Session   payments.Session `json:"session"`
	Intent    payments.Intent  `json:"intent"`
	HasIntent bool             `json:"has_intent"`
}

// Authorized reports whether the link's payment holds money: the intent
// is authorised (or, unexpectedly, already captured).
func (r PaymentLinkResult) Authorized() bool {
	return r.HasIntent && (r.Intent.Status == payments.StatusRequiresCapture || r.Intent.Status == payments.StatusSucceeded)
}

// CreatePaymentLink creates the booking's payment link: manual capture,
// the reference and the deposit step on the intent it creates.
func (a *Activities) CreatePaymentLink(ctx context.Context, in PaymentLinkInput) (PaymentLinkResult, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return PaymentLinkResult{}, err
	}
	returnURL := a.PaymentReturnURL
	if returnURL == "" {
		returnURL = defaultReturnURL
	}
	key := KeyOf(ctx)
	s, err := g.CreateCheckout(ctx, key, payments.Checkout{
		Amount: in.Amount, Currency: in.Currency, Reference: in.Reference, Step: DepositStep,
		Product: in.Product, Merchant: in.Merchant, SuccessURL: returnURL, ExpiresAt: in.ExpiresAt, Locale: in.Locale,
	})
	if err != nil {
		return PaymentLinkResult{}, paymentError("create payment link", err)
	}
	return PaymentLinkResult{Step: stepOf(ctx, key, s.ID), Session: s}, nil
}

// GetPaymentLink reads the link and, once a payment attempt created one,
// its intent: what the workflow decides from, never a webhook's word.
func (a *Activities) GetPaymentLink(ctx context.Context, in LinkInput) (PaymentLinkResult, error) {
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return PaymentLinkResult{}, err
	}
	return readLink(ctx, g, in.SessionID, Step{DownstreamID: in.SessionID})
}

// ExpirePaymentLink closes an open link so that it can no longer be paid.
// A link that is no longer open (paid meanwhile, or lapsed) is read
// instead: the result says which, and the workflow decides from it.
func (a *Activities) ExpirePaymentLink(ctx context.Context, in LinkInput) (PaymentLinkResult, error) {
	g, err := a.gateway(in.Tenant)
	if err != nil {
		return PaymentLinkResult{}, err
	}
	key := KeyOf(ctx)
	step := stepOf(ctx, key, in.SessionID)
	s, err := g.ExpireCheckout(ctx, key, in.SessionID)
	if payments.CodeOf(err) == payments.CodeSessionUnexpectedState {
		return readLink(ctx, g, in.SessionID, step)
	}
	if err != nil {
		return PaymentLinkResult{}, paymentError("expire payment link", err)
	}
	return withIntent(ctx, g, PaymentLinkResult{Step: step, Session: s})
}

func readLink(ctx context.Context, g payments.Gateway, id string, step Step) (PaymentLinkResult, error) {
	s, err := g.GetCheckout(ctx, id)
	if err != nil {
		return PaymentLinkResult{}, paymentError("read payment link", err)
	}
	return withIntent(ctx, g, PaymentLinkResult{Step: step, Session: s})
}

// withIntent adds the session's intent, if a payment attempt created one
// (a declined attempt leaves one that holds no money).
func withIntent(ctx context.Context, g payments.Gateway, res PaymentLinkResult) (PaymentLinkResult, error) {
	if res.Session.IntentID == "" {
		return res, nil
	}
	pi, err := g.GetIntent(ctx, res.Session.IntentID)
	if err != nil {
		return PaymentLinkResult{}, paymentError("read payment link intent", err)
	}
	res.Intent, res.HasIntent = pi, true
	return res, nil
}
