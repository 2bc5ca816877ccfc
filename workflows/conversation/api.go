// Package conversation is the long-lived dialogue with one customer, on
// every channel at once: each inbox event (a WhatsApp message, a spoken
// sentence) is understood, checked against the tenant's catalogue and run
// through one cross-channel dedup decision (merge, review or a new
// appointment saga); a cancel or move wish goes to the booking it means.
// It answers on the channel the customer used last.
//
// This file is what callers use: the registered name, the workflow IDs,
// the signal and its event, the input carried across continue-as-new.
// workflows.go is the workflow; decide.go the dedup decision about a
// wish and the start of its appointment; cancel.go, change*.go and
// move.go the changes of a booking; handover.go the move from the legacy
// ID.
package conversation

import (
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// WorkflowName is the registered workflow type. It is the name the
// function had before it moved into this package: running conversations
// and the gateway's signal-with-start refer to it, so it never changes.
const WorkflowName = "ConversationWorkflow"

// Register registers the conversation workflow under WorkflowName. Under
// Worker Versioning it upgrades automatically: a customer's conversation
// lasts as long as they write, so it moves to the current build at its
// next task, and changes are guarded with GetVersion.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName, VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
}

// WorkflowID is the one conversation per customer that voice
// and WhatsApp events meet in: customer:<tenant>:<key>, the key being the
// customer's keyed hash (package customerid), never the phone number,
// which IDs would show to anyone with Web UI or gRPC access.
func WorkflowID(tenant string, key customerid.Key) string {
	return reference.ConversationPrefix + tenant + ":" + string(key)
}

// LegacyWorkflowID is the ID conversations had before keys:
// customer:<tenant>:<E.164>. Only the move to the keyed ID still uses it
// (docs/privacy.md, "Moving running conversations").
func LegacyWorkflowID(tenant, number string) string {
	return reference.ConversationPrefix + tenant + ":" + number
}

// SignalInbound delivers one inbox event (a WhatsApp message or a spoken
// sentence) to the customer's conversation.
const SignalInbound = "inbound"

// InboundEvent is one inbox event. EventID is the inbox key: the
// conversation ignores IDs it has seen, so a relay that delivers twice has
// no second effect.
type InboundEvent struct {
	EventID    string            `json:"event_id"`
	Channel    workflows.Channel `json:"channel"`
	Text       string            `json:"text"`
	ReceivedAt time.Time         `json:"received_at"`
}

// Input starts (or continues-as-new) a conversation.
type Input struct {
	Tenant   string `json:"tenant"`
	Customer string `json:"customer"`
	// CustomerKey is the customer's keyed hash, the last part of the
	// workflow ID and the CustomerKey search attribute; empty in runs
	// started before keys (under the legacy ID).
	CustomerKey customerid.Key `json:"customer_key,omitempty"`
	// LegacyChecked: this conversation has asked once for the state of
	// a conversation under the legacy ID (handover.go).
	LegacyChecked bool `json:"legacy_checked,omitempty"`
	// Carried across continue-as-new.
	Seen    []string          `json:"seen,omitempty"`
	Offer   *Offer            `json:"offer,omitempty"`
	Pending []PendingDecision `json:"pending,omitempty"`
	// Awaiting is a question about a change of a booking waiting for its
	// answer; Changed the changes made lately (change.go).
	Awaiting *AwaitedChange `json:"awaiting,omitempty"`
	Changed  []RecentChange `json:"changed,omitempty"`
	// DepositAmount, Currency and PaymentMethod are used for bookings. An
	// empty PaymentMethod with a deposit is link mode: the appointment's
	// payment saga sends the customer a payment link (on the channel the
	// conversation came from; a caller gets it by WhatsApp).
	DepositAmount int64  `json:"deposit_amount"`
	Currency      string `json:"currency"`
	PaymentMethod string `json:"payment_method"`
	// Timezone (IANA) in which replies state times.
	Timezone string `json:"timezone,omitempty"`
	// Terms are the tenant's language, time zone, wording and per-service
	// labels and deposits: set by the gateway and refreshed by every
	// understood message. When set, they decide over DepositAmount,
	// Currency and Timezone (which runs recorded before them use).
	Terms *tenants.Terms `json:"terms,omitempty"`
	// EventsBeforeRestart is how many new inbound events a run handles
	// before it continues as new; 0 means the default (100). Tests set it
	// low to cross the boundary.
	EventsBeforeRestart int `json:"events_before_restart,omitempty"`
}

// Offer is the slot under discussion: what the customer asked for so far,
// so that "ja, passt" confirms it.
type Offer struct {
	Service string    `json:"service,omitempty"`
	Start   time.Time `json:"start,omitempty"`
}

// PendingDecision is an intent waiting for a review of a potential duplicate.
type PendingDecision struct {
	CaseID  string            `json:"case_id"`
	Intent  dedup.Intent      `json:"intent"`
	Channel workflows.Channel `json:"channel"`
}

// ChangeKind names a change of a booking.
type ChangeKind string

// Changes of a booking the conversation carries out.
const (
	ChangeCancel     ChangeKind = "cancel"
	ChangeReschedule ChangeKind = "reschedule"
)

// AwaitedChange is a change the conversation asked the customer about
// and waits for the answer to: the confirmation of a cancel that keeps
// the deposit, or the new time of a move.
type AwaitedChange struct {
	Kind          ChangeKind `json:"kind"`
	AppointmentID string     `json:"appointment_id,omitempty"`
	Service       string     `json:"service,omitempty"`
	AskedAt       time.Time  `json:"asked_at"`
}

// RecentChange is a change this conversation carried out, remembered for
// echoWindow to recognise the same wish arriving again.
type RecentChange struct {
	Kind          ChangeKind `json:"kind"`
	AppointmentID string     `json:"appointment_id"`
	Slot          time.Time  `json:"slot,omitzero"`
	// Service is the booking's (a cancel of one in flight remembers it).
	Service string    `json:"service,omitempty"`
	At      time.Time `json:"at"`
}
