// Package workflows holds bookonce's sagas. Workflow code is deterministic:
// no clock, no randomness, no map iteration for decisions, no goroutines;
// every side effect is an activity (package activities).
package workflows

import (
	"time"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/reference"
)

// TaskQueue is the default task queue of the bookonce worker.
const TaskQueue = "bookonce"

// BookingStatus is the state of a booking, shown as the BookingStatus
// search attribute.
type BookingStatus string

// Booking states. Confirmed, Rejected, PaymentFailed, Cancelled and
// AlreadyBooked are final; NeedsReview waits for a person.
const (
	StatusRequested     BookingStatus = "Requested"
	StatusHolding       BookingStatus = "Holding"
	StatusHeld          BookingStatus = "Held"
	StatusAuthorizing   BookingStatus = "Authorizing"
	StatusConfirming    BookingStatus = "Confirming"
	StatusConfirmed     BookingStatus = "Confirmed"
	StatusRejected      BookingStatus = "Rejected"
	StatusPaymentFailed BookingStatus = "PaymentFailed"
	StatusCancelled     BookingStatus = "Cancelled"
	StatusNeedsReview   BookingStatus = "NeedsReview"
	// StatusAlreadyBooked: the customer already had this appointment under
	// another reference (booked by hand at the front desk); the saga linked
	// it (BookingState.ExistingBooking), charged nothing and told the
	// customer. Not Rejected: the customer does have the appointment.
	StatusAlreadyBooked BookingStatus = "AlreadyBooked"
)

// QueryStatus is the query that returns a BookingState.
const QueryStatus = "status"

// Channel is where a request came from.
type Channel string

// Channels.
const (
	ChannelVoice    Channel = "voice"
	ChannelWhatsApp Channel = "whatsapp"
	ChannelAPI      Channel = "api"
	// ChannelAgent: an AI agent's tool call (package agent, MCP or HTTP).
	ChannelAgent Channel = "agent"
)

// BookingRequest is the input of AppointmentWorkflow.
type BookingRequest struct {
	Tenant   string `json:"tenant"`
	Customer string `json:"customer"` // E.164
	// CustomerKey is the customer's keyed hash (package customerid) for
	// the search attributes, which must not show the number; empty in
	// runs started before keys (they show only the masked number).
	CustomerKey customerid.Key `json:"customer_key,omitempty"`
	Service     string         `json:"service"`
	// ResourceID is optional: empty lets the calendar pick a free resource.
	ResourceID    string    `json:"resource_id,omitempty"`
	SlotStart     time.Time `json:"slot_start"`
	Channel       Channel   `json:"channel"`
	IntentID      string    `json:"intent_id"`
	DepositAmount int64     `json:"deposit_amount"` // minor units; 0 = no deposit
	Currency      string    `json:"currency"`
	// PaymentMethod is the card for the deposit (a Stripe PaymentMethod ID).
	// Empty with a deposit means link mode: the customer is sent a payment
	// link (PaymentWorkflow, payment_link.go).
	PaymentMethod string `json:"payment_method,omitempty"`
	// LinkTTL is the payment link's lifetime in link mode (default and
	// minimum DefaultLinkTTL, Stripe's minimum).
	LinkTTL Duration `json:"link_ttl,omitempty"`
	// Timezone (IANA) in which the confirmation states the time.
	Timezone string `json:"timezone,omitempty"`
	// Terms are the tenant's language, wording and service labels the
	// messages use (the conversation's); nil: the built-in German texts.
	Terms *activities.TenantTerms `json:"terms,omitempty"`
	// Tuning shortens timeouts and retries (tests); zero means defaults.
	Tuning Tuning `json:"tuning,omitempty"`
	// DeliberateSecond books even if the customer already has this service
	// at an overlapping time (a reviewer's "separate", a second car);
	// without it the calendar's refusal ends the saga AlreadyBooked.
	DeliberateSecond bool `json:"deliberate_second,omitempty"`
	// AcceptedAt is when the gateway accepted the webhook that asked for
	// the booking (its InboundEvent.ReceivedAt): the zero point of
	// bookonce_booking_phase_seconds. Zero (an API booking, a reviewer's
	// decision, a run started before it existed) records no phases.
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
}

// IntentID is the keyed ID of the business intent (intent.Canonical.ID:
// tenant, the customer's key, service, resource, slot start in UTC to the
// minute). Phrasing, channel and retries do not change it, so the same
// wish always maps to one workflow ID; without the customer key it cannot
// be computed, so the ID does not give the number away.
func IntentID(tenant string, key customerid.Key, service, resource string, start time.Time) (string, error) {
	return intent.Canonical{Tenant: tenant, CustomerKey: key, Service: service, Resource: resource, Start: start}.ID()
}

// LegacyIntentID is the ID intents had before versionKeyedIntentID, a
// plain hash of the number (intent.Canonical.LegacyID): replayed runs
// recorded before it, and dedup's fallback for their bookings, use it.
func LegacyIntentID(tenant, customer, service, resource string, start time.Time) string {
	return intent.Canonical{Tenant: tenant, Customer: customer, Service: service, Resource: resource, Start: start}.LegacyID()
}

// AppointmentWorkflowID is the meaningful, deterministic workflow ID of a
// booking intent; it is also the business reference sent downstream.
func AppointmentWorkflowID(tenant, intentID string) string {
	return reference.AppointmentPrefix + tenant + ":" + intentID
}

// Step is one row of the saga's status table.
type Step struct {
	Name         string `json:"name"`
	ActivityID   string `json:"activity_id"`
	Key          string `json:"key,omitempty"`
	Attempt      int32  `json:"attempt,omitempty"`
	DownstreamID string `json:"downstream_id,omitempty"`
	Result       string `json:"result"` // ok, failed, compensated, pending
	Error        string `json:"error,omitempty"`
}

// BookingState is what the status query returns and the workflow result.
type BookingState struct {
	Status    BookingStatus `json:"status"`
	Reference string        `json:"reference"`
	HoldID    string        `json:"hold_id,omitempty"`
	BookingID string        `json:"booking_id,omitempty"`
	// Payment is the deposit's state as last reported by PaymentWorkflow.
	Payment PaymentStatus `json:"payment,omitempty"`
	// IntentID is the deposit's payment intent.
	IntentID string `json:"intent_id,omitempty"`
	// PaymentURL and PaymentExpiresAt are the payment link the customer
	// was sent (link mode), as the payment saga last reported it.
	PaymentURL       string    `json:"payment_url,omitempty"`
	PaymentExpiresAt time.Time `json:"payment_expires_at,omitzero"`
	// MessageID is the confirmation's outbox row.
	MessageID string `json:"message_id,omitempty"`
	// ReviewCase is the open review case, if any.
	ReviewCase string `json:"review_case,omitempty"`
	// Lifecycle is the BookingWorkflow that owns the confirmed booking
	// from here on (cancel, completion); empty in runs before it existed
	// or when it could not be started (the failed step says why).
	Lifecycle string `json:"lifecycle,omitempty"`
	// ExistingBooking is the customer's appointment made under another
	// reference (its booking ID, or its hold ID while only held) that this
	// saga linked instead of booking again (StatusAlreadyBooked).
	ExistingBooking string `json:"existing_booking,omitempty"`
	// ExistingReference is that appointment's business reference.
	ExistingReference string `json:"existing_reference,omitempty"`
	Reason            string `json:"reason,omitempty"`
	// Alternatives are free slots offered when the wished one was taken.
	Alternatives []time.Time `json:"alternatives,omitempty"`
	Steps        []Step      `json:"steps"`
}

func stepFrom(name, activityID string, s activities.Step) Step {
	return Step{Name: name, ActivityID: activityID, Key: s.Key, Attempt: s.Attempt, DownstreamID: s.DownstreamID, Result: "ok"}
}
