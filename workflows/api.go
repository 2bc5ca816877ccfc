package workflows

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

	"github.com/bookonce/bookonce/internal/mask"
)

// StartAppointment starts the saga for req under its deterministic workflow
// ID. A second start of the same intent attaches to the existing run, or,
// once that run has completed with its booking standing, returns it
// instead of booking again: existing reports the completed case;
// attaching to a running one is not distinguished by the SDK. A booking
// that is over (cancelled, completed, ended without a booking:
// BookingTarget) does not stand in the way: the same wish is then a new
// booking, under the next ID of the intent's chain (NextAttemptID). The
// ID is keyed by req.CustomerKey, without which nothing starts; a booking
// of the same wish under its legacy ID is attached to (legacyBooking).
func StartAppointment(ctx context.Context, c client.Client, taskQueue string, req BookingRequest) (run client.WorkflowRun, existing bool, err error) {
	if req.IntentID == "" {
		if req.IntentID, err = IntentID(req.Tenant, req.CustomerKey, req.Service, req.ResourceID, req.SlotStart); err != nil {
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
	id := AppointmentWorkflowID(req.Tenant, req.IntentID)
	for range maxAttempts {
		run, existing, err = StartAppointmentAs(ctx, c, taskQueue, id, req)
		if err != nil || !existing {
			return run, existing, err
		}
		t, err := BookingTarget(ctx, c, id)
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
func legacyBooking(ctx context.Context, c client.Client, req BookingRequest) (string, error) {
	id := AppointmentWorkflowID(req.Tenant, LegacyIntentID(req.Tenant, req.Customer, req.Service, req.ResourceID, req.SlotStart))
	for range maxAttempts {
		d, err := describeBooking(ctx, c, id)
		if err != nil || !d.found {
			return "", err
		}
		t, err := BookingTarget(ctx, c, id)
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

// StartAppointmentAs is StartAppointment under the workflow ID a dedup
// decision named (a new attempt after a failed one has its own ID); req
// must carry its IntentID.
func StartAppointmentAs(ctx context.Context, c client.Client, taskQueue, id string, req BookingRequest) (run client.WorkflowRun, existing bool, err error) {
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
	run, err = c.ExecuteWorkflow(ctx, opts, AppointmentWorkflow, req)
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
func initialAttributes(req BookingRequest) temporal.SearchAttributes {
	return StartAttributes(keyedAttributes(req.Customer, req.CustomerKey), req)
}

// StartAttributes are initialAttributes with the customer named by
// customer (CustomerAttributes).
func StartAttributes(customer []temporal.SearchAttributeUpdate, req BookingRequest) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(append(customer,
		ChannelKey.ValueSet(string(req.Channel)), BookingStatusKey.ValueSet(string(StatusRequested)),
		ServiceKey.ValueSet(req.Service), SlotStartKey.ValueSet(req.SlotStart.UTC()),
	)...)
}

// AppointmentStatus queries a running or closed appointment's state.
func AppointmentStatus(ctx context.Context, c client.Client, workflowID string) (BookingState, error) {
	resp, err := c.QueryWorkflow(ctx, workflowID, "", QueryStatus)
	if err != nil {
		return BookingState{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st BookingState
	if err := resp.Get(&st); err != nil {
		return BookingState{}, fmt.Errorf("decode status of %s: %w", workflowID, err)
	}
	return st, nil
}
