package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
)

// Activity IDs are explicit so that keys and the status table name the
// step, and so that a reset or replay derives the same key for the same
// step of the same run.
const (
	activityHold    = "hold-slot"
	activityConfirm = "confirm-hold"
	activityRelease = "release-hold"
)

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

// AppointmentWorkflow turns one booking intent into one held and confirmed
// appointment. Its workflow ID is the business reference sent downstream.
func AppointmentWorkflow(ctx workflow.Context, req BookingRequest) (BookingState, error) {
	a := &appointment{req: req}
	if err := a.setup(ctx); err != nil {
		return a.state, err
	}
	return a.run(ctx)
}

type appointment struct {
	req   BookingRequest
	state BookingState
	// compensations run in reverse order when the saga fails.
	compensations []func(workflow.Context) error
}

func (a *appointment) setup(ctx workflow.Context) error {
	a.state = BookingState{Status: StatusRequested, Reference: workflow.GetInfo(ctx).WorkflowExecution.ID, Steps: []Step{}}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (BookingState, error) { return a.state, nil }); err != nil {
		return fmt.Errorf("register status query: %w", err)
	}
	return a.upsert(ctx, StatusRequested, "starting")
}

func (a *appointment) run(ctx workflow.Context) (BookingState, error) {
	hold, err := a.hold(ctx)
	if err != nil {
		return a.fail(ctx, err)
	}
	a.state.HoldID = hold.Hold.ID
	// Registered before the next step: if confirmation fails or its answer
	// is lost, the hold must not stay.
	a.compensations = append(a.compensations, func(ctx workflow.Context) error { return a.release(ctx, hold.Hold.ID) })
	if err := a.upsert(ctx, StatusHeld, "slot held, confirming"); err != nil {
		return a.fail(ctx, err)
	}

	booking, err := a.confirm(ctx, hold.Hold.ID)
	if err != nil {
		return a.fail(ctx, err)
	}
	a.state.BookingID = booking.Booking.ID
	a.compensations = nil
	if err := a.upsert(ctx, StatusConfirmed, "booked "+booking.Booking.ID); err != nil {
		return a.state, err
	}
	return a.state, nil
}

func (a *appointment) hold(ctx workflow.Context) (activities.HoldSlotResult, error) {
	if err := a.upsert(ctx, StatusHolding, "placing a hold in the calendar"); err != nil {
		return activities.HoldSlotResult{}, err
	}
	var res activities.HoldSlotResult
	err := workflow.ExecuteActivity(activityCtx(ctx, activityHold, "Hold "+a.req.Service+" at "+a.req.SlotStart.UTC().Format(time.RFC3339)),
		act.HoldSlot, activities.HoldSlotInput{
			Tenant: a.req.Tenant, Reference: a.state.Reference, ResourceID: a.req.ResourceID,
			Service: a.req.Service, Customer: a.req.Customer, Start: a.req.SlotStart,
		}).Get(ctx, &res)
	a.record("hold slot", activityHold, res.Step, err)
	return res, err
}

func (a *appointment) confirm(ctx workflow.Context, holdID string) (activities.ConfirmHoldResult, error) {
	if err := a.upsert(ctx, StatusConfirming, "confirming hold "+holdID); err != nil {
		return activities.ConfirmHoldResult{}, err
	}
	var res activities.ConfirmHoldResult
	err := workflow.ExecuteActivity(activityCtx(ctx, activityConfirm, "Confirm hold "+holdID),
		act.ConfirmHold, activities.ConfirmHoldInput{Tenant: a.req.Tenant, HoldID: holdID}).Get(ctx, &res)
	a.record("confirm hold", activityConfirm, res.Step, err)
	return res, err
}

func (a *appointment) release(ctx workflow.Context, holdID string) error {
	var step activities.Step
	err := workflow.ExecuteActivity(activityCtx(ctx, activityRelease, "Release hold "+holdID),
		act.ReleaseHold, activities.ReleaseHoldInput{Tenant: a.req.Tenant, HoldID: holdID}).Get(ctx, &step)
	a.record("release hold", activityRelease, step, err)
	return err
}

// fail compensates in reverse order in a disconnected context (so that a
// cancelled workflow still undoes its steps) and ends in a visible state.
func (a *appointment) fail(ctx workflow.Context, cause error) (BookingState, error) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	for i := len(a.compensations) - 1; i >= 0; i-- {
		if err := a.compensations[i](dctx); err != nil {
			workflow.GetLogger(ctx).Error("compensation failed", "error", err)
		}
	}
	status, reason := StatusRejected, cause.Error()
	var appErr *temporal.ApplicationError
	if errors.As(cause, &appErr) && appErr.Type() == activities.ErrTypeSlotUnavailable {
		reason = "slot_unavailable"
		a.state.Alternatives = alternatives(appErr)
	}
	if temporal.IsCanceledError(cause) {
		status, reason = StatusCancelled, "cancelled"
	}
	a.state.Reason = reason
	_ = a.upsert(dctx, status, "ended: "+reason)
	return a.state, nil
}

func alternatives(appErr *temporal.ApplicationError) []time.Time {
	var slots []struct {
		Start time.Time `json:"start"`
	}
	if appErr.HasDetails() && appErr.Details(&slots) == nil {
		out := make([]time.Time, 0, len(slots))
		for _, s := range slots {
			out = append(out, s.Start)
		}
		return out
	}
	return nil
}

func (a *appointment) record(name, activityID string, s activities.Step, err error) {
	step := stepFrom(name, activityID, s)
	if err != nil {
		step.Result, step.Error = "failed", err.Error()
	}
	a.state.Steps = append(a.state.Steps, step)
}

// upsert moves the status and publishes it to the Web UI.
func (a *appointment) upsert(ctx workflow.Context, status BookingStatus, details string) error {
	a.state.Status = status
	workflow.SetCurrentDetails(ctx, details)
	err := workflow.UpsertTypedSearchAttributes(ctx,
		BookingStatusKey.ValueSet(string(status)),
		CustomerPhoneKey.ValueSet(a.req.Customer),
		ChannelKey.ValueSet(string(a.req.Channel)),
		ServiceKey.ValueSet(a.req.Service),
		SlotStartKey.ValueSet(a.req.SlotStart.UTC()),
	)
	if err != nil {
		return fmt.Errorf("upsert search attributes: %w", err)
	}
	return nil
}

// activityCtx sets the activity ID, a summary for the Web UI, and a retry
// policy that keeps retrying transient and unknown outcomes with the same
// key (the downstream replays) while final answers stop at once.
func activityCtx(ctx workflow.Context, id, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		Summary:             summary,
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    200 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    20,
		},
	})
}
