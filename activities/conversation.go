package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
)

// ErrTypeDedupFinal marks a dedup failure that retrying cannot fix.
const ErrTypeDedupFinal = "DedupRejected"

// Understanding holds what the conversation activities need besides the
// clients: the extractor, the tenants (catalogue, time zone, terms), dedup.
type Understanding struct {
	Extractor intent.Extractor
	// Tenants returns a tenant's configuration (the tenants registry).
	// When nil, Catalogue and Location serve every tenant and no terms are
	// returned.
	Tenants   func(tenant string) (*tenants.Profile, bool)
	Catalogue func(tenant string) (intent.Catalogue, error)
	Location  *time.Location
	Dedup     *dedup.Store
	// ReminderLead is copied into every tenant's terms (REMINDER_LEAD;
	// zero: the booking lifecycle's default).
	ReminderLead time.Duration
	// DecisionTimeout is copied into every tenant's terms
	// (PAYMENT_DECISION_TIMEOUT; zero: derived by the booking).
	DecisionTimeout time.Duration
}

// ErrUnknownTenant: a message for a tenant that is not configured (any
// more); retrying cannot fix it.
var ErrUnknownTenant = errors.New("tenant not configured")

// tenant returns the catalogue, time zone and terms of a tenant.
func (u Understanding) tenant(id string) (intent.Catalogue, *time.Location, *tenants.Terms, error) {
	if u.Tenants == nil {
		cat, err := u.Catalogue(id)
		return cat, u.Location, nil, err
	}
	p, ok := u.Tenants(id)
	if !ok {
		return intent.Catalogue{}, nil, nil, fmt.Errorf("tenant %q: %w", id, ErrUnknownTenant)
	}
	terms := p.Terms()
	terms.ReminderLead, terms.DecisionTimeout = u.ReminderLead, u.DecisionTimeout
	return p.Catalogue(), p.Location, terms, nil
}

// ExtractInput is one inbound text to understand.
type ExtractInput struct {
	Tenant     string    `json:"tenant"`
	Text       string    `json:"text"`
	ReceivedAt time.Time `json:"received_at"`
	// Channel is where the text came from: only written channels take
	// STOP and START (Understood.Consent); empty in runs before them.
	Channel string `json:"channel,omitempty"`
}

// Understood is an extraction validated against the catalogue and the
// opening hours; Question is set when the customer must be asked. Terms
// are the tenant's terms as configured when the message was understood
// (nil in histories recorded before tenants were configurable).
type Understood struct {
	Result   intent.Result  `json:"result"`
	Question string         `json:"question,omitempty"`
	Terms    *tenants.Terms `json:"terms,omitempty"`
	// Consent is set when the text is a STOP or START keyword: the
	// message is the customer's consent change, not a wish.
	Consent consent.Action `json:"consent,omitempty"`
}

// ExtractIntent understands a message relative to when it was received
// (not when the activity runs: a retry must understand it the same way).
func (a *Activities) ExtractIntent(ctx context.Context, in ExtractInput) (Understood, error) {
	u := a.Understanding
	cat, loc, terms, err := u.tenant(in.Tenant)
	if err != nil {
		return Understood{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeDedupFinal, err)
	}
	var stop, start []string
	if terms != nil {
		stop, start = terms.OptOutKeywords, terms.OptInKeywords
	}
	if action := consentOf(in.Channel, in.Text, stop, start); action != "" {
		return Understood{Result: intent.Result{Kind: intent.KindUnclear}, Consent: action, Terms: terms}, nil
	}
	r, err := u.Extractor.Extract(ctx, in.Text, in.ReceivedAt, loc, cat)
	if err != nil {
		return Understood{}, fmt.Errorf("extract intent: %w", err)
	}
	out := Understood{Result: r, Question: r.Question, Terms: terms}
	return out, nil
}

// ValidateInput is a complete wish to check before anything starts.
type ValidateInput struct {
	Tenant     string        `json:"tenant"`
	Result     intent.Result `json:"result"`
	ReceivedAt time.Time     `json:"received_at"`
}

// ValidateIntent checks a wish against catalogue and opening hours and
// returns the clarifying question when it does not fit ("" when it does).
func (a *Activities) ValidateIntent(ctx context.Context, in ValidateInput) (string, error) {
	cat, loc, _, err := a.Understanding.tenant(in.Tenant)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeDedupFinal, err)
	}
	err = intent.Validate(in.Result, in.ReceivedAt, loc, cat)
	var ve *intent.ValidationError
	if errors.As(err, &ve) {
		return ve.Question, nil
	}
	return "", err
}

// DecideDedup takes the cross-channel decision for an intent, once per
// activity execution: a retry returns the decision already taken.
func (a *Activities) DecideDedup(ctx context.Context, in dedup.Intent) (dedup.Decision, error) {
	d, err := a.Understanding.Dedup.Decide(ctx, KeyOf(ctx), in)
	if err != nil {
		return dedup.Decision{}, err
	}
	countDecision(in.Tenant, d)
	return d, nil
}

// ReplyInput is a message back to the customer about one inbound event.
type ReplyInput struct {
	Tenant         string `json:"tenant"`
	ConversationID string `json:"conversation_id"`
	Customer       string `json:"customer"`
	Channel        string `json:"channel"`
	EventID        string `json:"event_id"`
	Text           string `json:"text"`
}

// SendReply reserves one reply per inbound event in the outbox.
func (a *Activities) SendReply(ctx context.Context, in ReplyInput) (Step, error) {
	key := KeyOf(ctx)
	m, err := a.Messages.Send(ctx, key, outbox.Message{
		Tenant: in.Tenant, Reference: in.ConversationID, Kind: "reply:" + in.EventID, Channel: in.Channel, Recipient: in.Customer, Body: in.Text,
	})
	if err != nil && !errors.Is(err, outbox.ErrConflict) {
		return Step{}, fmt.Errorf("send reply: %w", err)
	}
	return stepOf(ctx, key, m.ID), nil
}

// CloseIntentInput names the intent of an appointment that did not book.
type CloseIntentInput struct {
	Tenant     string `json:"tenant"`
	IntentID   string `json:"intent_id"`
	WorkflowID string `json:"workflow_id"`
}

// CloseIntent lets the same wish start afresh after this appointment ended
// without a booking; a no-op for appointments no conversation started.
func (a *Activities) CloseIntent(ctx context.Context, in CloseIntentInput) error {
	if a.Understanding.Dedup == nil {
		return nil
	}
	return a.Understanding.Dedup.Close(ctx, in.Tenant, in.IntentID, in.WorkflowID)
}

// FindAppointmentsInput names the customer whose bookings a cancellation
// wish can mean.
type FindAppointmentsInput struct {
	Tenant   string `json:"tenant"`
	Customer string `json:"customer"`
	// WishReceivedAt is when the wish the lookup is for was received:
	// a booking an agent or the API started after it is not what the wish
	// meant and is left out (zero: none is). A cancel sent on two
	// channels whose second copy is handled after the customer has
	// already booked again by an agent must not cancel the new booking.
	WishReceivedAt time.Time `json:"wish_received_at,omitzero"`
}

// Appointment is one of the customer's upcoming bookings as Temporal sees
// it now. The activity reports facts; the workflow decides what they mean.
type Appointment struct {
	dedup.Booked
	// Found is false when no workflow exists under WorkflowID: the state is
	// unknown, never "nothing happened".
	Found bool `json:"found"`
	// Running is true while the appointment workflow has not closed.
	Running bool `json:"running"`
	// Status is the appointment's BookingStatus search attribute.
	Status string `json:"status,omitempty"`
	// Lifecycle is the BookingStatus of the booking's lifecycle workflow
	// (BookingWorkflowID), once the appointment confirmed it: Confirmed,
	// Cancelled, Completed, ... Empty: no lifecycle found.
	Lifecycle string `json:"lifecycle,omitempty"`
	// Slot is the lifecycle's SlotStart: the booking's current slot,
	// which a reschedule moves away from the intent's SlotStart.
	Slot time.Time `json:"slot,omitzero"`
}

// movedLookback is how far back FindAppointments looks for intents: a
// booking moved up to this far past its first slot is still found.
const movedLookback = 90 * 24 * time.Hour

// Current is the booking's slot now: the lifecycle's, else the intent's.
func (ap Appointment) Current() time.Time {
	if !ap.Slot.IsZero() {
		return ap.Slot
	}
	return ap.SlotStart
}

// BookingWorkflowID is the lifecycle workflow's ID of the appointment
// appointmentID: derived, so any caller who knows the booking finds it.
func BookingWorkflowID(appointmentID string) string {
	return reference.BookingPrefix + appointmentID
}

// bookingStatusKey and slotStartKey are search attributes package
// workflows owns (activities cannot import workflows).
var (
	bookingStatusKey = temporal.NewSearchAttributeKeyKeyword("BookingStatus")
	slotStartKey     = temporal.NewSearchAttributeKeyTime("SlotStart")
)

// FindAppointments lists the customer's upcoming bookings from the dedup
// intents (the conversation's own record of what it started, across every
// run and channel) and asks Temporal for each appointment's state. A
// failing lookup fails the activity: the caller must not read "no
// booking" into an error.
func (a *Activities) FindAppointments(ctx context.Context, in FindAppointmentsInput) ([]Appointment, error) {
	if a.Understanding.Dedup == nil {
		return nil, temporal.NewNonRetryableApplicationError("no dedup store configured", ErrTypeDedupFinal, nil)
	}
	// From further back than now: a booking moved later keeps its
	// intent's first slot; what is over by its current slot is left out
	// below.
	now := time.Now()
	booked, err := a.Understanding.Dedup.Since(ctx, in.Tenant, in.Customer, now.Add(-movedLookback))
	if err != nil {
		return nil, err
	}
	tc := activity.GetClient(ctx)
	out := make([]Appointment, 0, len(booked))
	for _, b := range booked {
		if b.StartedAfter(in.WishReceivedAt) {
			continue
		}
		ap := Appointment{Booked: b}
		d, err := tc.DescribeWorkflow(ctx, b.WorkflowID, "")
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			return nil, fmt.Errorf("describe appointment %s: %w", b.WorkflowID, err)
		default:
			ap.Found = true
			ap.Running = d.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
			if status, ok := d.TypedSearchAttributes.GetKeyword(bookingStatusKey); ok { // unset before the first upsert
				ap.Status = status
			}
		}
		// A running appointment may be at its very end: it starts the
		// lifecycle, then upserts Confirmed and closes; once the lifecycle
		// exists, it takes the changes.
		if ap.Found {
			if err := describeLifecycle(ctx, tc, &ap); err != nil {
				return nil, err
			}
		}
		if !ap.Current().After(now) {
			continue // its slot (as moved) has passed: nothing to change
		}
		out = append(out, ap)
	}
	return out, nil
}

// describeLifecycle adds the booking lifecycle's status and slot to a
// closed appointment; none found leaves them empty.
func describeLifecycle(ctx context.Context, tc client.Client, ap *Appointment) error {
	d, err := tc.DescribeWorkflow(ctx, BookingWorkflowID(ap.WorkflowID), "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return nil
	case err != nil:
		return fmt.Errorf("describe booking %s: %w", ap.WorkflowID, err)
	}
	if status, ok := d.TypedSearchAttributes.GetKeyword(bookingStatusKey); ok {
		ap.Lifecycle = status
	}
	if slot, ok := d.TypedSearchAttributes.GetTime(slotStartKey); ok {
		ap.Slot = slot
	}
	return nil
}
