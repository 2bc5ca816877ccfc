// Package appointment is the booking saga: one appointment from the
// customer's wish to a confirmed, paid booking, or to nothing held and
// nothing charged. It holds the slot, has the deposit authorised by its
// payment child (package deposit), confirms the booking,
// captures, sends the confirmation and hands the booking to its lifecycle
// (package lifecycle); every step's undo is registered before the
// step runs and runs, in reverse, when a later step fails.
//
// This file is what callers use: the registered name, the workflow ID,
// the request and state, the start (one booking per intent) and the
// status query. workflows.go is the workflow, steps.go its steps,
// ending.go, not_booked.go, alternatives.go, already_booked.go and
// deadlines.go how it ends and what the customer is told,
// start_lifecycle.go and late_cancel.go the hand-over to the lifecycle.
package appointment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// WorkflowName is the registered workflow type. It is the name the
// function had before it moved into this package: running appointments,
// their histories and the conversations that start them refer to it, so
// it never changes.
const WorkflowName = "AppointmentWorkflow"

// Register registers the appointment saga under WorkflowName. Under
// Worker Versioning it is pinned: a saga of minutes (a payment link's
// half hour at most) ends on the build that started it.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName, VersioningBehavior: workflow.VersioningBehaviorPinned})
}

// Request is the input of Workflow.
type Request struct {
	Tenant   string `json:"tenant"`
	Customer string `json:"customer"` // E.164
	// CustomerKey is the customer's keyed hash (package customerid) for
	// the search attributes, which must not show the number; empty in
	// runs started before keys (they show only the masked number).
	CustomerKey customerid.Key `json:"customer_key,omitempty"`
	Service     string         `json:"service"`
	// ResourceID is optional: empty lets the calendar pick a free resource.
	ResourceID    string            `json:"resource_id,omitempty"`
	SlotStart     time.Time         `json:"slot_start"`
	Channel       workflows.Channel `json:"channel"`
	IntentID      string            `json:"intent_id"`
	DepositAmount int64             `json:"deposit_amount"` // minor units; 0 = no deposit
	Currency      string            `json:"currency"`
	// PaymentMethod is the card for the deposit (a Stripe PaymentMethod ID).
	// Empty with a deposit means link mode: the customer is sent a payment
	// link (package deposit).
	PaymentMethod string `json:"payment_method,omitempty"`
	// LinkTTL is the payment link's lifetime in link mode (default and
	// minimum DefaultLinkTTL, Stripe's minimum).
	LinkTTL workflows.Duration `json:"link_ttl,omitempty"`
	// Timezone (IANA) in which the confirmation states the time.
	Timezone string `json:"timezone,omitempty"`
	// Terms are the tenant's language, wording and service labels the
	// messages use (the conversation's); nil: the built-in German texts.
	Terms *tenants.Terms `json:"terms,omitempty"`
	// Tuning shortens timeouts and retries (tests); zero means defaults.
	Tuning workflows.Tuning `json:"tuning,omitempty"`
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

// WorkflowID is the meaningful, deterministic workflow ID of a
// booking intent; it is also the business reference sent downstream.
func WorkflowID(tenant, intentID string) string {
	return reference.AppointmentPrefix + tenant + ":" + intentID
}

// State is what the status query returns and the workflow result.
type State struct {
	Status    workflows.BookingStatus `json:"status"`
	Reference string                  `json:"reference"`
	HoldID    string                  `json:"hold_id,omitempty"`
	BookingID string                  `json:"booking_id,omitempty"`
	// Payment is the deposit's state as last reported by the deposit saga.
	Payment deposit.Status `json:"payment,omitempty"`
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
	// ConfirmationWithdrawn: a cancel reached the committed appointment
	// before its confirmation went out, and the confirmation was taken
	// back (the lifecycle's cancellation message is the customer's next).
	ConfirmationWithdrawn bool `json:"confirmation_withdrawn,omitempty"`
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
	Alternatives []time.Time      `json:"alternatives,omitempty"`
	Steps        []workflows.Step `json:"steps"`
}

// Start starts the saga for req under its deterministic workflow
// ID. A second start of the same intent attaches to the existing run, or,
// once that run has completed with its booking standing, returns it
// instead of booking again: existing reports the completed case;
// attaching to a running one is not distinguished by the SDK. A booking
// that is over (cancelled, completed, ended without a booking:
// BookingTarget) does not stand in the way: the same wish is then a new
// booking, under the next ID of the intent's chain (NextAttemptID). The
// ID is keyed by req.CustomerKey, without which nothing starts; a booking
// of the same wish under its legacy ID is attached to (legacyBooking).
func Start(ctx context.Context, c client.Client, taskQueue string, req Request) (run client.WorkflowRun, existing bool, err error) {
	if req.IntentID == "" {
		if req.IntentID, err = workflows.IntentID(req.Tenant, req.CustomerKey, req.Service, req.ResourceID, req.SlotStart); err != nil {
			return nil, false, fmt.Errorf("start appointment: set the customer key: %w", err)
		}
		old, err := legacyBooking(ctx, c, req)
		if err != nil {
			return nil, false, err
		}
		if old != "" {
			return c.GetWorkflow(ctx, old, ""), true, nil
		}
	}
	id := WorkflowID(req.Tenant, req.IntentID)
	for range maxAttempts {
		run, existing, err = StartAs(ctx, c, taskQueue, id, req)
		if err != nil || !existing {
			return run, existing, err
		}
		t, err := workflows.BookingTarget(ctx, c, id)
		if err != nil {
			return nil, false, fmt.Errorf("read the booking of %s: %w", id, err)
		}
		if !t.Over {
			return run, true, nil
		}
		id = NextAttemptID(id)
	}
	return nil, false, fmt.Errorf("intent %s was booked and ended %d times; ask a person", req.IntentID, maxAttempts)
}

// legacyBooking is the booking a start of req made before keyed intent
// IDs (versionKeyedIntentID), under the chain of its legacy ID, if one is
// still under way or stands; "" if none. Delete it with LegacyIntentID
// once every slot booked before the upgrade has passed.
func legacyBooking(ctx context.Context, c client.Client, req Request) (string, error) {
	id := WorkflowID(req.Tenant, workflows.LegacyIntentID(req.Tenant, req.Customer, req.Service, req.ResourceID, req.SlotStart))
	for range maxAttempts {
		found, err := workflows.BookingExists(ctx, c, id)
		if err != nil || !found {
			return "", err
		}
		t, err := workflows.BookingTarget(ctx, c, id)
		if err != nil {
			return "", fmt.Errorf("read the booking of %s: %w", id, err)
		}
		if !t.Over {
			return id, nil
		}
		id = NextAttemptID(id)
	}
	return "", nil
}

// maxAttempts bounds the bookings one intent's chain of IDs follows.
const maxAttempts = 50

// NextAttemptID is the workflow ID of the booking that follows the one
// under id when that one is over: derived from id, so every start of the
// same wish after it converges on one booking.
func NextAttemptID(id string) string {
	base := id // appointment:<tenant>:<intent>[-<attempt>]
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		if j := strings.IndexByte(id[i+1:], '-'); j >= 0 {
			base = id[:i+1+j]
		}
	}
	sum := sha256.Sum256([]byte(id))
	return base + "-" + hex.EncodeToString(sum[:4])
}

// StartAs is Start under the workflow ID a dedup
// decision named (a new attempt after a failed one has its own ID); req
// must carry its IntentID.
func StartAs(ctx context.Context, c client.Client, taskQueue, id string, req Request) (run client.WorkflowRun, existing bool, err error) {
	opts := client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: taskQueue,
		// Running: attach. Completed: refuse, so the intent is not booked
		// twice. Failed or terminated: a new run may try again (the business
		// reference still finds anything the old run left).
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		// Tell a completed duplicate apart from a fresh start.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes:                    initialAttributes(req),
		StaticSummary:                            fmt.Sprintf("%s for %s at %s", req.Service, mask.Phones(req.Customer), req.SlotStart.UTC().Format(time.RFC3339)),
		StaticDetails: fmt.Sprintf("Booking intent %s via %s (tenant %s), deposit %d %s. The workflow ID is the business reference sent to the calendar and payment APIs.",
			req.IntentID, req.Channel, req.Tenant, req.DepositAmount, req.Currency),
	}
	run, err = c.ExecuteWorkflow(ctx, opts, WorkflowName, req)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return c.GetWorkflow(ctx, id, ""), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("start appointment %s: %w", id, err)
	}
	return run, false, nil
}

// initialAttributes are the search attributes a booking starts with, so
// the Web UI lists it from its first moment.
func initialAttributes(req Request) temporal.SearchAttributes {
	return StartAttributes(workflows.KeyedAttributes(req.Customer, req.CustomerKey), req)
}

// StartAttributes are initialAttributes with the customer named by
// customer (CustomerAttributes).
func StartAttributes(customer []temporal.SearchAttributeUpdate, req Request) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append(customer,
		workflows.ChannelKey.ValueSet(string(req.Channel)), workflows.BookingStatusKey.ValueSet(string(workflows.StatusRequested)),
		workflows.ServiceKey.ValueSet(req.Service), workflows.SlotStartKey.ValueSet(req.SlotStart.UTC()),
	)...)
}

// StatusOf returns an appointment's state: a completed one's result, read
// from its history, or a running one's status query. A completed run is
// not queried: the query would be answered by a worker of the build that
// ran it (the saga is pinned), and a deploy stops that build once nothing
// runs on it (docs/deploy.md); the result needs no worker at all.
func StatusOf(ctx context.Context, c client.Client, workflowID string) (State, error) {
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return State{}, fmt.Errorf("describe %s: %w", workflowID, err)
	}
	if d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		var st State
		if err := c.GetWorkflow(ctx, workflowID, "").Get(ctx, &st); err != nil {
			return State{}, fmt.Errorf("result of %s: %w", workflowID, err)
		}
		return st, nil
	}
	resp, err := c.QueryWorkflow(ctx, workflowID, "", workflows.QueryStatus)
	if err != nil {
		return State{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st State
	if err := resp.Get(&st); err != nil {
		return State{}, fmt.Errorf("decode status of %s: %w", workflowID, err)
	}
	return st, nil
}
