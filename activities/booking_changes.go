package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Error types of ChangeBooking besides those the booking's Update raises
// (which pass through with their type and details).
const (
	// ErrTypeBookingGone: no running lifecycle under the ID (never
	// started, or over).
	ErrTypeBookingGone = "BookingGone"
	// ErrTypeChangePending: the booking accepted the change and is still
	// carrying it out (a refund retried through an outage); it tells the
	// customer itself when done.
	ErrTypeChangePending = "ChangePending"
)

// changeWaitMargin is how long before the activity's deadline the wait
// for the change's outcome gives up and answers ErrTypeChangePending.
const changeWaitMargin = 2 * time.Second

// ChangeBookingInput asks a booking's lifecycle workflow for a change.
type ChangeBookingInput struct {
	Tenant string `json:"tenant"`
	// AppointmentID is the appointment's workflow ID; the lifecycle runs
	// under BookingWorkflowID(AppointmentID).
	AppointmentID string `json:"appointment_id"`
	// Update is the Update's name ("cancel", "reschedule"), UpdateID its
	// ID derived from the inbound event, so a retried activity, a
	// redelivered event or a second worker reaches the same Update and
	// the booking acts once.
	Update   string          `json:"update"`
	UpdateID string          `json:"update_id"`
	Args     json.RawMessage `json:"args"`
}

// ChangeBooking sends the Update and returns the booking's answer (its
// state, as JSON; package workflows decodes it). The booking's refusals
// (the validator's, a taken slot) come back non-retryable with their
// type and details; a lifecycle that does not exist as ErrTypeBookingGone.
// An Update that was accepted but has not finished before the activity's
// deadline is ErrTypeChangePending: it goes on, and asking again with the
// same UpdateID would answer its outcome.
func (a *Activities) ChangeBooking(ctx context.Context, in ChangeBookingInput) (json.RawMessage, error) {
	if in.AppointmentID == "" || in.Update == "" || in.UpdateID == "" {
		return nil, temporal.NewNonRetryableApplicationError("change without appointment, update or update ID", ErrTypeBookingGone, nil)
	}
	h, err := activity.GetClient(ctx).UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: BookingWorkflowID(in.AppointmentID), UpdateID: in.UpdateID, UpdateName: in.Update,
		Args: []any{in.Args}, WaitForStage: client.WorkflowUpdateStageAccepted,
	})
	if err != nil {
		return nil, changeError(in, err)
	}
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, deadline.Add(-changeWaitMargin))
		defer cancel()
	}
	var answer json.RawMessage
	if err := h.Get(wait, &answer); err != nil {
		if wait.Err() != nil && ctx.Err() == nil {
			return nil, temporal.NewNonRetryableApplicationError(in.Update+" of "+in.AppointmentID+" accepted, still under way", ErrTypeChangePending, nil)
		}
		return nil, changeError(in, err)
	}
	return answer, nil
}

// changeError sorts an Update's failure: the booking's own refusal and a
// missing booking are final; anything else (the server unreachable) is
// retried with the same Update ID.
func changeError(in ChangeBookingInput, err error) error {
	var appErr *temporal.ApplicationError
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &appErr):
		var details []any
		if appErr.HasDetails() {
			var d json.RawMessage
			if derr := appErr.Details(&d); derr != nil {
				return fmt.Errorf("%s of %s: decode refusal details: %w", in.Update, in.AppointmentID, derr)
			}
			details = append(details, d)
		}
		return temporal.NewNonRetryableApplicationError(appErr.Message(), appErr.Type(), err, details...)
	case errors.As(err, &notFound):
		return temporal.NewNonRetryableApplicationError("no running booking "+in.AppointmentID, ErrTypeBookingGone, err)
	}
	return fmt.Errorf("%s of %s: %w", in.Update, in.AppointmentID, err)
}
