// Package lifecycle is a booking's life after its confirmation: one
// workflow per booking, started by the appointment saga once the booking
// is confirmed, that stays addressable until the slot has passed. It
// takes the changes a customer or a member of staff asks for as Temporal
// Updates (cancel, reschedule, no-show), sends the reminders, and
// completes the booking when its slot has passed (docs/lifecycle.md).
//
// This file is what callers use: the registered name, the Update IDs and
// the calls that send an Update or a query. workflows.go is the workflow;
// cancel.go, reschedule.go, noshow.go and remind.go its changes.
package lifecycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
)

// WorkflowName is the registered workflow type. It is the name the
// function had before it moved into this package: running lifecycles and
// the appointments that start them refer to it, so it never changes.
const WorkflowName = "BookingWorkflow"

// Register registers the booking lifecycle under WorkflowName. Under
// Worker Versioning it upgrades automatically: a booking waits weeks for
// its slot, longer than an old build should run, so each of its tasks
// goes to the current build, and changes are guarded with GetVersion.
func Register(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName, VersioningBehavior: workflow.VersioningBehaviorAutoUpgrade})
}

// ErrTypeSlotUnavailable is the application error type of a reschedule
// refused because the new slot is taken; its details are a
// RescheduleRefused. The activities' type, named here for the callers of
// Reschedule.
const ErrTypeSlotUnavailable = activities.ErrTypeSlotUnavailable

// CancelUpdateID derives the cancel Update's ID from the inbound event
// that asked for it: the tenant and its Idempotency-Key (or the inbox
// event ID, or an agent's operation ID). The server deduplicates Update
// IDs, so a retried or redelivered request gets the first answer and
// never acts twice. Hashed for a fixed, printable length; the tenant is
// part of it so two tenants' keys never meet.
func CancelUpdateID(tenant, key string) string {
	return changeUpdateID("cancel-", tenant, key)
}

// RescheduleUpdateID derives the reschedule Update's ID from the inbound
// event that asked for it, as CancelUpdateID does for a cancel.
func RescheduleUpdateID(tenant, key string) string {
	return changeUpdateID("reschedule-", tenant, key)
}

// NoShowUpdateID derives the no_show Update's ID from the request that
// asked for it, as CancelUpdateID does for a cancel.
func NoShowUpdateID(tenant, key string) string {
	return changeUpdateID("no-show-", tenant, key)
}

func changeUpdateID(prefix, tenant, key string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + key))
	return prefix + hex.EncodeToString(sum[:])[:32]
}

// Cancel sends the cancel Update with updateID to the
// lifecycle of the appointment appointmentID and waits for the
// booking's new state. A refusal of the validator comes back as an
// application error of type ErrTypeNotCancellable, ErrTypeInvalidCancel
// or (req.OnlyIfRefunded) ErrTypeDepositWouldBeKept; a booking without a
// running lifecycle as a serviceerror.NotFound.
func Cancel(ctx context.Context, c client.Client, appointmentID, updateID string, req CancelRequest) (State, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateCancel,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return State{}, fmt.Errorf("cancel %s: %w", appointmentID, err)
	}
	var st State
	if err := h.Get(ctx, &st); err != nil {
		return State{}, fmt.Errorf("cancel %s: %w", appointmentID, err)
	}
	return st, nil
}

// MarkNoShow sends the no_show Update with updateID to the
// lifecycle of the appointment appointmentID and waits for the
// booking's new state. A refusal of the validator comes back as an
// application error of type ErrTypeNotNoShow or ErrTypeInvalidNoShow; a
// booking without a running lifecycle as a serviceerror.NotFound.
func MarkNoShow(ctx context.Context, c client.Client, appointmentID, updateID string, req NoShowRequest) (State, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateNoShow,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return State{}, fmt.Errorf("no-show %s: %w", appointmentID, err)
	}
	var st State
	if err := h.Get(ctx, &st); err != nil {
		return State{}, fmt.Errorf("no-show %s: %w", appointmentID, err)
	}
	return st, nil
}

// Reschedule sends the reschedule Update with updateID to the
// lifecycle of the appointment appointmentID and waits for the
// booking's new state. A taken slot comes back as an application error of
// type activities.ErrTypeSlotUnavailable whose details are a
// RescheduleRefused; a refusal as ErrTypeNotReschedulable or
// ErrTypeInvalidReschedule; a booking without a running lifecycle as a
// serviceerror.NotFound.
func Reschedule(ctx context.Context, c client.Client, appointmentID, updateID string, req RescheduleRequest) (State, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateReschedule,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return State{}, fmt.Errorf("reschedule %s: %w", appointmentID, err)
	}
	var st State
	if err := h.Get(ctx, &st); err != nil {
		return State{}, fmt.Errorf("reschedule %s: %w", appointmentID, err)
	}
	return st, nil
}

// PolicyOf asks the lifecycle of the appointment appointmentID
// for the refund policy it was confirmed under (QueryCancelPolicy).
func PolicyOf(ctx context.Context, c client.Client, appointmentID string) (CancelPolicy, error) {
	v, err := c.QueryWorkflow(ctx, WorkflowID(appointmentID), "", QueryCancelPolicy)
	if err != nil {
		return CancelPolicy{}, fmt.Errorf("cancel policy of %s: %w", appointmentID, err)
	}
	var p CancelPolicy
	if err := v.Get(&p); err != nil {
		return CancelPolicy{}, fmt.Errorf("cancel policy of %s: %w", appointmentID, err)
	}
	return p, nil
}

// StateOf returns the State of the appointment
// appointmentID's lifecycle (its lifecycle query).
func StateOf(ctx context.Context, c client.Client, appointmentID string) (State, error) {
	resp, err := c.QueryWorkflow(ctx, WorkflowID(appointmentID), "", QueryLifecycle)
	if err != nil {
		return State{}, fmt.Errorf("query the lifecycle of %s: %w", appointmentID, err)
	}
	var st State
	if err := resp.Get(&st); err != nil {
		return State{}, fmt.Errorf("decode the lifecycle of %s: %w", appointmentID, err)
	}
	return st, nil
}
