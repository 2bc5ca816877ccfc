package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
)

// Messenger is the port through which confirmations leave. The default,
// OutboxMessenger, reserves the message in the outbox (unique per booking
// and kind); the channels' sender delivers reserved messages through Twilio.
type Messenger interface {
	Send(ctx context.Context, key string, m outbox.Message) (outbox.Message, error)
	// Withdraw takes back a booking's message of a kind that no relay has
	// tried to send yet, and reports whether it did.
	Withdraw(ctx context.Context, tenant, reference, kind string) (bool, error)
}

// OutboxMessenger records messages in the outbox for the sender.
type OutboxMessenger struct{ Store *outbox.Store }

// Send reserves m; a second reservation for the same booking and kind
// returns the first.
func (o OutboxMessenger) Send(ctx context.Context, key string, m outbox.Message) (outbox.Message, error) {
	return o.Store.Reserve(ctx, key, m)
}

// Withdraw takes back a reserved message that was never attempted
// (outbox.Store.Withdraw).
func (o OutboxMessenger) Withdraw(ctx context.Context, tenant, reference, kind string) (bool, error) {
	return o.Store.Withdraw(ctx, tenant, reference, kind)
}

// WithdrawInput names the booking's message to take back.
type WithdrawInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
	Kind      string `json:"kind"`
}

// WithdrawMessage takes back the booking's message of in.Kind if it has
// not gone out yet; false means it is on its way (or out) or was never
// reserved. Idempotent: a retry finds its own withdrawal and reports true.
func (a *Activities) WithdrawMessage(ctx context.Context, in WithdrawInput) (bool, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	return a.Messages.Withdraw(ctx, in.Tenant, in.Reference, in.Kind)
}

// ConfirmationInput is the confirmation of a booking.
type ConfirmationInput struct {
	Tenant    string `json:"tenant"`
	Reference string `json:"reference"`
	Channel   string `json:"channel"`
	Customer  string `json:"customer"`
	Text      string `json:"text"`
	// Kind is the outbox kind (one message per booking and kind); empty
	// means "confirmation". The saga tells a customer who is already booked
	// with MessageKindAlreadyBooked, and one who lost the slot with
	// "alternatives".
	Kind string `json:"kind,omitempty"`
	// AcceptedAt is when the booking's webhook was accepted (zero: none);
	// the outbox keeps it so the relay records the phase message_sent.
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
	// SendBy is the message's business deadline (zero: none): a reserved
	// message the relay reaches later is recorded as expired (with the
	// reason, on the ops page), never sent late.
	SendBy time.Time `json:"send_by,omitzero"`
	// Template names the message in the tenant's templates and Fields
	// fill it: outside WhatsApp's 24-hour window the relay sends the
	// shop's approved template of that name instead of Text (Compose).
	Template string            `json:"template,omitempty"`
	Fields   map[string]string `json:"fields,omitempty"`
}

// Compose sets the message's text from the terms' template name filled
// with data, and what the relay needs to send it as the shop's approved
// WhatsApp template instead, once the customer's window has closed.
func (in ConfirmationInput) Compose(t *tenants.Terms, name tenants.TemplateName, data tenants.MessageData) ConfirmationInput {
	in.Text, in.Template, in.Fields = t.Render(name, data), string(name), data.Fields()
	return in
}

// MessageKindAlreadyBooked is the outbox kind of the message that tells a
// customer the wished appointment already exists (booked by hand).
const MessageKindAlreadyBooked = "already_booked"

// MessageKindNotBooked tells a customer whose booking ended without one
// (declined, lapsed, undone) that nothing was booked or charged;
// MessageKindInReview one whose booking a person must settle.
const (
	MessageKindNotBooked = "not_booked"
	MessageKindInReview  = "in_review"
)

// SendConfirmation sends the booking confirmation (or the message of
// in.Kind) exactly once.
func (a *Activities) SendConfirmation(ctx context.Context, in ConfirmationInput) (Step, error) {
	traceBooking(ctx, in.Tenant, in.Reference)
	key := KeyOf(ctx)
	kind := in.Kind
	if kind == "" {
		kind = MessageKindConfirmation
	}
	m, err := a.Messages.Send(ctx, key, outbox.Message{
		Tenant: in.Tenant, Reference: in.Reference, Kind: kind, Channel: in.Channel, Recipient: in.Customer, Body: in.Text,
		AcceptedAt: in.AcceptedAt, SendBy: in.SendBy, Template: in.Template, Fields: in.Fields,
	})
	if errors.Is(err, outbox.ErrConflict) {
		// Another text is reserved for this booking: retrying cannot help.
		return Step{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeOutboxConflict, err, m.ID)
	}
	if err != nil {
		return Step{}, fmt.Errorf("send %s: %w", kind, err)
	}
	return stepOf(ctx, key, m.ID), nil
}

// MessageKindConfirmation is the outbox kind of a booking's confirmation
// (SendConfirmation without a Kind).
const MessageKindConfirmation = "confirmation"

// ErrTypeOutboxConflict: a different message of the same kind is already
// reserved for the booking (never replaced silently).
const ErrTypeOutboxConflict = "OutboxConflict"

// ReviewInput opens a review case for the running workflow.
type ReviewInput struct {
	Tenant     string         `json:"tenant"`
	WorkflowID string         `json:"workflow_id"`
	Reason     review.Reason  `json:"reason"`
	Details    map[string]any `json:"details"`
}

// OpenReviewCase opens (once per activity execution) a case for a person.
func (a *Activities) OpenReviewCase(ctx context.Context, in ReviewInput) (Step, error) {
	key := KeyOf(ctx)
	details, err := json.Marshal(in.Details)
	if err != nil {
		return Step{}, fmt.Errorf("review details: %w", err)
	}
	c, err := a.Reviews.Open(ctx, key, review.Case{Tenant: in.Tenant, WorkflowID: in.WorkflowID, Reason: in.Reason, Details: details})
	if err != nil {
		return Step{}, err
	}
	return stepOf(ctx, key, c.ID), nil
}
