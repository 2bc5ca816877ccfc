package appointment

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// versionForwardLateCancel: a cancel that reaches the appointment after
// its commit (the conversation saw it still running and was told "we
// cancel") is carried out by the booking's lifecycle, read once the
// lifecycle has started. Before, one read before the lifecycle's start
// opened a case and one landing during the start was never read.
const versionForwardLateCancel = "forward-late-cancel"

// versionForwardRefunds: the forwarded cancel asks for a full refund
// instead of refusing inside the cancellation window: a person had to
// decide what the customer had already been told.
const versionForwardRefunds = "forward-cancel-refunds"

// versionWithdrawConfirmation: the forwarded cancel first takes back the
// confirmation if it is still waiting in the outbox. The conversation
// told the customer "Wir stornieren Ihre noch nicht bestätigte Buchung";
// a "bestätigt" reaching them after that was false (#48 item 4). One the
// relay has already tried to send stays as it is. Runs recorded before
// sent it as they did.
const versionWithdrawConfirmation = "withdraw-confirmation"

// lateCancelReason is the reason the lifecycle records for such a cancel.
const lateCancelReason = "asked by the customer while the booking was being confirmed"

// forwardLateCancel drains the cancel signals and hands them, as one
// wish, to the lifecycle's cancel Update. The customer was told the
// booking, not yet confirmed, is being cancelled, and nothing about a
// kept deposit: the cancel refunds in full whatever the window (before
// versionForwardRefunds: only on the condition that it refunds, and a
// person decided otherwise). A lifecycle that did not start, or a
// failure, opens a cancellation_request case: the wish is not lost.
func (a *appointment) forwardLateCancel(ctx workflow.Context) {
	if !a.cancelRequested() {
		return
	}
	for a.cancelRequested() { // one wish however often the customer asked
	}
	if a.versions.GetVersion(ctx, versionWithdrawConfirmation, workflow.DefaultVersion, 1) >= 1 {
		a.withdrawConfirmation(ctx)
	}
	err := a.cancelLifecycle(ctx)
	for a.cancelRequested() { // asked again meanwhile: the same wish
	}
	if err == nil || workflows.ErrorType(err) == activities.ErrTypeChangePending {
		return // cancelled, or under way: the booking sends its message
	}
	workflow.GetLogger(ctx).Warn("cancel after commit: a person decides", "lifecycle", a.state.Lifecycle, "error", err)
	caseID, cerr := workflows.OpenCase(ctx, a.tuning, a.req.Tenant, "cancellation-request", review.ReasonCancellationRequest, err)
	a.noteCase(ctx, caseID, cerr)
}

// cancelLifecycle sends the lifecycle the cancel Update under an ID
// derived from this appointment, so a retry or a replay reaches the same
// Update and the booking acts once.
func (a *appointment) cancelLifecycle(ctx workflow.Context) error {
	if a.state.Lifecycle == "" {
		return fmt.Errorf("the booking's lifecycle did not start: cancel %s by hand", a.state.Reference)
	}
	req := lifecycle.CancelRequest{Reason: lateCancelReason, OnlyIfRefunded: true}
	if a.versions.GetVersion(ctx, versionForwardRefunds, workflow.DefaultVersion, 1) >= 1 {
		req = lifecycle.CancelRequest{Reason: lateCancelReason, RefundInFull: true}
	}
	args, err := json.Marshal(req)
	if err != nil {
		return err
	}
	in := activities.ChangeBookingInput{
		Tenant: a.req.Tenant, AppointmentID: a.state.Reference, Update: lifecycle.UpdateCancel,
		UpdateID: lifecycle.CancelUpdateID(a.req.Tenant, "appointment:"+a.state.Reference), Args: args,
	}
	cctx := workflows.CompensationCtx(ctx, a.tuning, "forward-cancel", "Cancel the booking: asked while it was confirmed")
	return workflow.ExecuteActivity(cctx, act.ChangeBooking, in).Get(ctx, nil)
}

// withdrawConfirmation takes back the confirmation the saga reserved, if
// no relay has tried to send it yet and a lifecycle is there to carry the
// cancel out (without one a person decides, and the confirmation stays).
// A failure leaves it to go out: the cancel goes ahead either way, and its
// own message follows it.
func (a *appointment) withdrawConfirmation(ctx workflow.Context) {
	if a.state.MessageID == "" || a.state.Lifecycle == "" {
		return
	}
	var withdrawn bool
	err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, a.tuning, "withdraw-confirmation", "Withdraw the confirmation: the customer cancelled"),
		act.WithdrawMessage, activities.WithdrawInput{Tenant: a.req.Tenant, Reference: a.state.Reference, Kind: activities.MessageKindConfirmation}).Get(ctx, &withdrawn)
	if err != nil {
		workflow.GetLogger(ctx).Warn("withdraw the confirmation: it may still go out before the cancellation", "error", err)
		return
	}
	a.state.ConfirmationWithdrawn = withdrawn
}
