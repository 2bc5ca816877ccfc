package appointment

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// versionBookingLifecycle: a confirmed appointment starts its
// BookingWorkflow before it ends. Runs recorded before it end as before.
const versionBookingLifecycle = "booking-lifecycle"

// startLifecycle hands the confirmed booking to its BookingWorkflow, a
// child that outlives the appointment (ParentClosePolicy ABANDON). The
// appointment waits until the child has started, so its end cannot lose
// the start. A child already running under the derived ID (a reset of
// this appointment) is the same booking's and is kept. A start that
// failed otherwise is recorded in the step table: the booking stands, but
// a change of it then needs a person.
func (a *appointment) startLifecycle(ctx workflow.Context) {
	id := lifecycle.WorkflowID(a.state.Reference)
	in := a.lifecycleInput()
	// The booking is committed: a cancellation of the appointment now must
	// not keep its lifecycle from starting, nor reach the child. The
	// context is never cancelled: cancelling the context a child was
	// started with asks the server to cancel the child.
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: lifecycle.StartAttributes(workflows.CustomerAttributes(ctx, a.versions, a.req.Customer, a.req.CustomerKey), in),
		StaticSummary:         lifecycle.Summary(in),
	})
	child := workflow.ExecuteChildWorkflow(cctx, lifecycle.WorkflowName, in)
	err := child.GetChildWorkflowExecution().Get(ctx, nil)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		a.state.Steps = append(a.state.Steps, workflows.Step{Name: "start booking lifecycle", ActivityID: id, Result: "failed", Error: err.Error()})
		workflow.GetLogger(ctx).Error("start booking lifecycle", "workflow_id", id, "error", err)
		return
	}
	a.state.Lifecycle = id
}

// lifecycleInput is the confirmed booking as the appointment leaves it.
func (a *appointment) lifecycleInput() lifecycle.Input {
	in := lifecycle.Input{
		Tenant: a.req.Tenant, Reference: a.state.Reference, Customer: a.req.Customer, Service: a.req.Service,
		Channel: a.req.Channel, BookingID: a.state.BookingID, ResourceID: a.req.ResourceID,
		SlotStart: a.req.SlotStart, SlotEnd: a.slotEnd, Timezone: a.req.Timezone, Terms: a.req.Terms,
		IntentID: a.state.IntentID, Currency: a.req.Currency, Tuning: a.req.Tuning,
	}
	if a.state.Payment == deposit.Captured {
		in.Deposit = a.req.DepositAmount
	}
	if a.req.Terms != nil {
		in.CancellationWindow, in.Reminders = a.req.Terms.CancellationWindow, a.req.Terms.Reminders
		if in.Tuning.ReminderLead == 0 {
			in.Tuning.ReminderLead = a.req.Terms.ReminderLead
		}
	}
	return in
}
