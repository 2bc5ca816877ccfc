package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.temporal.io/sdk/client"
)

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

// CancelAppointment sends the cancel Update with updateID to the
// BookingWorkflow of the appointment appointmentID and waits for the
// booking's new state. A refusal of the validator comes back as an
// application error of type ErrTypeNotCancellable, ErrTypeInvalidCancel
// or (req.OnlyIfRefunded) ErrTypeDepositWouldBeKept; a booking without a
// running lifecycle as a serviceerror.NotFound.
func CancelAppointment(ctx context.Context, c client.Client, appointmentID, updateID string, req CancelRequest) (LifecycleState, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: BookingWorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateCancel,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return LifecycleState{}, fmt.Errorf("cancel %s: %w", appointmentID, err)
	}
	var st LifecycleState
	if err := h.Get(ctx, &st); err != nil {
		return LifecycleState{}, fmt.Errorf("cancel %s: %w", appointmentID, err)
	}
	return st, nil
}

// MarkNoShow sends the no_show Update with updateID to the
// BookingWorkflow of the appointment appointmentID and waits for the
// booking's new state. A refusal of the validator comes back as an
// application error of type ErrTypeNotNoShow or ErrTypeInvalidNoShow; a
// booking without a running lifecycle as a serviceerror.NotFound.
func MarkNoShow(ctx context.Context, c client.Client, appointmentID, updateID string, req NoShowRequest) (LifecycleState, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: BookingWorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateNoShow,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return LifecycleState{}, fmt.Errorf("no-show %s: %w", appointmentID, err)
	}
	var st LifecycleState
	if err := h.Get(ctx, &st); err != nil {
		return LifecycleState{}, fmt.Errorf("no-show %s: %w", appointmentID, err)
	}
	return st, nil
}

// RescheduleAppointment sends the reschedule Update with updateID to the
// BookingWorkflow of the appointment appointmentID and waits for the
// booking's new state. A taken slot comes back as an application error of
// type activities.ErrTypeSlotUnavailable whose details are a
// RescheduleRefused; a refusal as ErrTypeNotReschedulable or
// ErrTypeInvalidReschedule; a booking without a running lifecycle as a
// serviceerror.NotFound.
func RescheduleAppointment(ctx context.Context, c client.Client, appointmentID, updateID string, req RescheduleRequest) (LifecycleState, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: BookingWorkflowID(appointmentID), UpdateID: updateID, UpdateName: UpdateReschedule,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return LifecycleState{}, fmt.Errorf("reschedule %s: %w", appointmentID, err)
	}
	var st LifecycleState
	if err := h.Get(ctx, &st); err != nil {
		return LifecycleState{}, fmt.Errorf("reschedule %s: %w", appointmentID, err)
	}
	return st, nil
}

// CancelPolicyOf asks the BookingWorkflow of the appointment appointmentID
// for the refund policy it was confirmed under (QueryCancelPolicy).
func CancelPolicyOf(ctx context.Context, c client.Client, appointmentID string) (CancelPolicy, error) {
	v, err := c.QueryWorkflow(ctx, BookingWorkflowID(appointmentID), "", QueryCancelPolicy)
	if err != nil {
		return CancelPolicy{}, fmt.Errorf("cancel policy of %s: %w", appointmentID, err)
	}
	var p CancelPolicy
	if err := v.Get(&p); err != nil {
		return CancelPolicy{}, fmt.Errorf("cancel policy of %s: %w", appointmentID, err)
	}
	return p, nil
}

// AppointmentLifecycle returns the LifecycleState of the appointment
// appointmentID's BookingWorkflow (its lifecycle query).
func AppointmentLifecycle(ctx context.Context, c client.Client, appointmentID string) (LifecycleState, error) {
	resp, err := c.QueryWorkflow(ctx, BookingWorkflowID(appointmentID), "", QueryLifecycle)
	if err != nil {
		return LifecycleState{}, fmt.Errorf("query the lifecycle of %s: %w", appointmentID, err)
	}
	var st LifecycleState
	if err := resp.Get(&st); err != nil {
		return LifecycleState{}, fmt.Errorf("decode the lifecycle of %s: %w", appointmentID, err)
	}
	return st, nil
}
