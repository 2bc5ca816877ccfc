// Package deposit is the deposit: its card steps (card.go), which the
// appointment runs itself, and the deposit saga, a child of the
// appointment saga for a payment link (and for card deposits of
// appointments started before they ran inline): authorise with manual
// capture (or send a payment link and wait for it to be paid), tell the
// parent, then capture or void as the parent decides; without a decision
// in time it voids on its own.
//
// This file is what callers use: the registered name, the workflow ID,
// the signals and their payloads, the input and the state.
// card.go is the card steps (with the retry under the same key after an
// unknown outcome), workflows.go the saga's card flow, link.go and
// link_steps.go the payment link.
package deposit

import (
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// WorkflowName is the registered workflow type. It is the name the
// function had before it moved into this package: running appointments
// start and signal it by that name, so it never changes.
const WorkflowName = "PaymentWorkflow"

// Register registers the deposit saga under WorkflowName, pinned under
// Worker Versioning like the appointment that starts it.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName, VersioningBehavior: workflow.VersioningBehaviorPinned})
}

// Signal names. The values are those of running workflows: never change them.
const (
	// SignalDecision: the appointment tells its payment to capture or void.
	SignalDecision = "payment-decision"
	// SignalStatus: the payment tells its appointment how authorisation went.
	SignalStatus = "payment-status"
	// SignalEvent carries an Event: the gateway relays a
	// verified, deduplicated payment webhook to WorkflowID(reference).
	SignalEvent = "payment-event"
)

// Event is a payment provider's webhook event as the gateway relays
// it to the payment workflow. It is a hint, not the truth: the workflow
// reads the session or intent from the provider before deciding, so a
// forged, stale or out-of-order event cannot move money.
type Event struct {
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

// Action is the appointment's decision on the deposit.
type Action string

// Payment decisions.
const (
	Capture Action = "capture"
	Void    Action = "void"
)

// Status is the state of a deposit.
type Status string

// Deposit states.
const (
	Authorizing Status = "Authorizing"
	Authorized  Status = "Authorized"
	Declined    Status = "Declined"
	Captured    Status = "Captured"
	Voided      Status = "Voided"
	NeedsReview Status = "NeedsReview"
	Failed      Status = "Failed"
	// PaymentAwaitingPayment: a payment link was sent; the customer has
	// not paid yet (link mode).
	AwaitingPayment Status = "AwaitingPayment"
	// PaymentExpired: the payment link lapsed unpaid; nothing is held.
	Expired Status = "Expired"
)

// Request is the input of the deposit saga.
type Request struct {
	Tenant        string `json:"tenant"`
	Reference     string `json:"reference"` // the appointment's workflow ID
	Customer      string `json:"customer"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	PaymentMethod string `json:"payment_method"`
	Description   string `json:"description"`
	// DecisionTimeout is how long the saga waits for the appointment's
	// decision before it asks whether the appointment still runs: it
	// voids the authorisation only once the appointment is gone.
	DecisionTimeout workflows.Duration `json:"decision_timeout"`
	Tuning          workflows.Tuning   `json:"tuning"`
	// Link mode (PaymentMethod empty): the deposit is paid through a
	// payment link. LinkTTL is the link's lifetime (default and minimum
	// DefaultLinkTTL); Channel, Terms and Timezone say how and in which
	// words the link reaches the customer.
	LinkTTL  workflows.Duration `json:"link_ttl,omitempty"`
	Channel  workflows.Channel  `json:"channel,omitempty"`
	Terms    *tenants.Terms     `json:"terms,omitempty"`
	Timezone string             `json:"timezone,omitempty"`
}

// State is the payment's status query result and workflow result.
type State struct {
	Status   Status `json:"status"`
	IntentID string `json:"intent_id,omitempty"`
	Reason   string `json:"reason,omitempty"`
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
	NothingHeld bool             `json:"nothing_held,omitempty"`
	Steps       []workflows.Step `json:"steps"`
}

// Workflow is the deposit saga, a child of the appointment saga:
// authorise with manual capture, tell the parent, then wait for its
// decision (capture or void); without a decision in time it voids on its
// own. Its own compensation (void) is registered before authorising.
func Workflow(ctx workflow.Context, req Request) (State, error) {
	p := &payment{req: req, tuning: req.Tuning.WithDefaults()}
	if err := p.setup(ctx); err != nil {
		return p.state, err
	}
	return p.run(ctx)
}

// WorkflowID derives the child's ID from the appointment's, so a
// re-run of the parent meets the same child.
func WorkflowID(appointmentID string) string { return reference.PaymentPrefix + appointmentID }
