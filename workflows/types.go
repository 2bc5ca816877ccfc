package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/customerid"
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

// Booking lifecycle states, besides StatusConfirmed (booked, waiting for
// the slot) and StatusCancelled (final). StatusNeedsReview: a change could
// not be completed and a person works from the review case.
const (
	// StatusCancelling: a cancellation is being carried out.
	StatusCancelling BookingStatus = "Cancelling"
	// StatusCompleted: the slot has passed; the deposit stays captured.
	StatusCompleted BookingStatus = "Completed"
)

// StatusNoShow: a member of staff marked that the customer did not come;
// the deposit is kept. Final.
const StatusNoShow BookingStatus = "NoShow"

// QueryStatus is the query that returns a BookingState.
const QueryStatus = "status"

// Channel is where a request came from.
type Channel string

// Channels.
const (
	ChannelVoice    Channel = "voice"
	ChannelWhatsApp Channel = "whatsapp"
	// ChannelSMS: a customer's SMS to one of the shop's numbers, answered
	// by SMS.
	ChannelSMS Channel = "sms"
	ChannelAPI Channel = "api"
	// ChannelAgent: an AI agent's tool call (package agent, MCP or HTTP).
	ChannelAgent Channel = "agent"
)

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

func StepFrom(name, activityID string, s activities.Step) Step {
	return Step{Name: name, ActivityID: activityID, Key: s.Key, Attempt: s.Attempt, DownstreamID: s.DownstreamID, Result: "ok"}
}

// KeyedStep is a row of a status table; a failed step shows the key it
// sent, derived as the activity did.
func KeyedStep(info *workflow.Info, name, activityID string, s activities.Step, err error) Step {
	step := StepFrom(name, activityID, s)
	if step.Key == "" {
		step.Key = activities.Key(info.Namespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, activityID)
	}
	if err != nil {
		step.Result, step.Error = FailedResult(err), err.Error()
	}
	return step
}
