package workflows

import (
	"time"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
)

// Signal names. Typed constants, so senders and receivers cannot drift.
const (
	// SignalCancel: the customer cancels before the booking is confirmed.
	SignalCancel = "cancel"
	// SignalReviewDecision carries a reviewer's ReviewDecision (defined,
	// and sent, by review.Resolver).
	SignalReviewDecision = review.SignalDecision
	// SignalPaymentDecision: the appointment tells its payment to capture or void.
	SignalPaymentDecision = "payment-decision"
	// SignalPaymentStatus: the payment tells its appointment how authorisation went.
	SignalPaymentStatus = "payment-status"
	// SignalPaymentEvent carries a PaymentEvent: the gateway relays a
	// verified, deduplicated payment webhook to PaymentWorkflowID(reference).
	SignalPaymentEvent = "payment-event"
)

// PaymentEvent is a payment provider's webhook event as the gateway relays
// it to the payment workflow. It is a hint, not the truth: the workflow
// reads the session or intent from the provider before deciding, so a
// forged, stale or out-of-order event cannot move money.
type PaymentEvent struct {
	// EventID is the provider's event ID (evt_…), unique per event; a
	// redelivery carries the same one.
	EventID string `json:"event_id"`
	// Type is the provider's event type, e.g. checkout.session.completed.
	Type string `json:"type"`
	// SessionID is the Checkout Session (cs_…) the event is about, if any.
	SessionID string `json:"session_id,omitempty"`
	// IntentID is the PaymentIntent (pi_…) the event is about, if any.
	IntentID string `json:"intent_id,omitempty"`
	// Created is when the provider created the event.
	Created time.Time `json:"created"`
}

// Payment event types the payment workflow acts on (Stripe's names).
const (
	EventCheckoutCompleted = "checkout.session.completed"
	EventCheckoutExpired   = "checkout.session.expired"
	EventIntentCapturable  = "payment_intent.amount_capturable_updated"
	EventIntentFailed      = "payment_intent.payment_failed"
	EventIntentCanceled    = "payment_intent.canceled"
	EventIntentSucceeded   = "payment_intent.succeeded"
)

// ReviewDecision resolves the review case a workflow waits on.
type ReviewDecision = review.Decision

// PaymentAction is the appointment's decision on the deposit.
type PaymentAction string

// Payment decisions.
const (
	PaymentCapture PaymentAction = "capture"
	PaymentVoid    PaymentAction = "void"
)

// PaymentStatus is the state of a deposit.
type PaymentStatus string

// Deposit states.
const (
	PaymentAuthorizing PaymentStatus = "Authorizing"
	PaymentAuthorized  PaymentStatus = "Authorized"
	PaymentDeclined    PaymentStatus = "Declined"
	PaymentCaptured    PaymentStatus = "Captured"
	PaymentVoided      PaymentStatus = "Voided"
	PaymentNeedsReview PaymentStatus = "NeedsReview"
	PaymentFailed      PaymentStatus = "Failed"
	// PaymentAwaitingPayment: a payment link was sent; the customer has
	// not paid yet (link mode).
	PaymentAwaitingPayment PaymentStatus = "AwaitingPayment"
	// PaymentExpired: the payment link lapsed unpaid; nothing is held.
	PaymentExpired PaymentStatus = "Expired"
)

// PaymentRequest is the input of PaymentWorkflow.
type PaymentRequest struct {
	Tenant        string `json:"tenant"`
	Reference     string `json:"reference"` // the appointment's workflow ID
	Customer      string `json:"customer"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	PaymentMethod string `json:"payment_method"`
	Description   string `json:"description"`
	// DecisionTimeout voids the authorisation when no decision arrives.
	DecisionTimeout Duration `json:"decision_timeout"`
	Tuning          Tuning   `json:"tuning"`
	// Link mode (PaymentMethod empty): the deposit is paid through a
	// payment link. LinkTTL is the link's lifetime (default and minimum
	// DefaultLinkTTL); Channel, Terms and Timezone say how and in which
	// words the link reaches the customer.
	LinkTTL  Duration                `json:"link_ttl,omitempty"`
	Channel  Channel                 `json:"channel,omitempty"`
	Terms    *activities.TenantTerms `json:"terms,omitempty"`
	Timezone string                  `json:"timezone,omitempty"`
}

// PaymentState is the payment's status query result and workflow result.
type PaymentState struct {
	Status   PaymentStatus `json:"status"`
	IntentID string        `json:"intent_id,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	// ReviewCase is the compensation_failed case the saga opened when it
	// could not void or refund.
	ReviewCase string `json:"review_case,omitempty"`
	// SessionID, PaymentURL and PaymentExpiresAt are the payment link
	// (link mode); the URL is what the customer was sent.
	SessionID        string    `json:"session_id,omitempty"`
	PaymentURL       string    `json:"payment_url,omitempty"`
	PaymentExpiresAt time.Time `json:"payment_expires_at,omitzero"`
	// NothingHeld: the saga proved that no deposit is or ever will be
	// held although it names no intent (its payment link was never
	// created, so nobody holds a URL to pay), so the appointment's void
	// has nothing to look up: a search that lags writes (Stripe's) could
	// never prove that absence.
	NothingHeld bool   `json:"nothing_held,omitempty"`
	Steps       []Step `json:"steps"`
}
