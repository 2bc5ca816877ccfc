package lifecycle

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// ErrTypeNotCancellable is the error type of a cancel the validator
// refuses: the booking is over (or its slot has begun). Nothing was done.
const ErrTypeNotCancellable = "NotCancellable"

// ErrTypeDepositWouldBeKept is the refusal of a cancel sent with
// OnlyIfRefunded that falls inside the cancellation window of a booking
// with a deposit. Nothing was done; ask the customer, then cancel without
// the flag.
const ErrTypeDepositWouldBeKept = "DepositWouldBeKept"

// ErrTypeInvalidCancel is the error type of a malformed cancel request.
const ErrTypeInvalidCancel = "InvalidCancel"

// MessageKindCancellation is the outbox kind of the cancellation message
// (one per booking).
const MessageKindCancellation = "cancellation"

// validateCancel refuses, before anything is recorded, a cancel of a
// booking that is over or whose slot has begun. A cancelled booking is
// accepted: the handler answers its state again without acting.
func (b *booking) validateCancel(ctx workflow.Context, in CancelRequest) error {
	if len(in.Reason) > maxCancelReason {
		return temporal.NewApplicationError(fmt.Sprintf("reason longer than %d bytes", maxCancelReason), ErrTypeInvalidCancel)
	}
	switch b.state.Status {
	case workflows.StatusCancelled, workflows.StatusCancelling:
		return nil
	case workflows.StatusCompleted:
		return temporal.NewApplicationError("the appointment is over (Completed): it cannot be cancelled", ErrTypeNotCancellable)
	case workflows.StatusNoShow:
		return temporal.NewApplicationError("the appointment is over (marked as a no-show): it cannot be cancelled", ErrTypeNotCancellable)
	case workflows.StatusNeedsReview:
		return temporal.NewApplicationError("a change of this booking waits for a person (review case "+b.state.ReviewCase+")", ErrTypeNotCancellable)
	}
	now := workflow.Now(ctx)
	if !now.Before(b.in.SlotStart) {
		return temporal.NewApplicationError("the appointment has begun: it cannot be cancelled", ErrTypeNotCancellable)
	}
	if in.OnlyIfRefunded && b.in.Deposit > 0 && now.After(b.in.SlotStart.Add(-b.window())) {
		return temporal.NewApplicationError("a cancel now keeps the deposit (inside the cancellation window): ask the customer first", ErrTypeDepositWouldBeKept)
	}
	return nil
}

// cancel carries out a cancellation once: the calendar booking cancelled
// (the slot is free at once), the deposit refunded or kept by the
// tenant's window, one message. A second cancel waits for the first and
// answers the same state.
func (b *booking) cancel(ctx workflow.Context, in CancelRequest) (State, error) {
	if b.cancelling || b.state.Status == workflows.StatusCancelled {
		err := workflow.Await(ctx, func() bool { return !b.cancelling })
		return b.state, err
	}
	// The decision uses workflow time when the cancel arrived (not after
	// a wait below): a replay, or a retried request that the server
	// deduplicated, sees the same side of the boundary.
	now := workflow.Now(ctx)
	b.cancelling = true
	defer func() { b.cancelling = false }()
	// The booking reads Cancelling from the moment the cancel is taken,
	// also while a reminder being sent goes first: a wish for the same
	// slot meanwhile is told the booking is being cancelled, never "in
	// Bearbeitung" over a booking about to end. A move under way publishes
	// its own status; the cancel publishes after it.
	if !b.moving && b.versions.GetVersion(ctx, versionCancellingAtOnce, workflow.DefaultVersion, 1) >= 1 {
		if err := b.upsert(ctx, workflows.StatusCancelling, "cancelling: "+in.Reason); err != nil {
			return b.state, err
		}
	}
	// A reminder being sent goes first: none follows the cancellation. A
	// move under way finishes too: the cancel then cancels the new slot,
	// and the window is measured to it.
	if err := workflow.Await(ctx, func() bool { return !b.reminding && !b.moving }); err != nil {
		return b.state, err
	}
	if b.state.Status == workflows.StatusNeedsReview {
		// The move it waited for left two bookings: a person settles both,
		// and must know the customer has since asked to cancel.
		if b.versions.GetVersion(ctx, versionCancelAfterMoveReview, workflow.DefaultVersion, 1) >= 1 {
			b.cancelWishInReview(ctx, in, now)
		}
		return b.state, nil
	}
	free := !now.After(b.in.SlotStart.Add(-b.window()))
	before := in.RefundInFull && b.versions.GetVersion(ctx, versionRefundInFull, workflow.DefaultVersion, 1) >= 1
	b.state.CancelReason, b.state.CancelledAt = in.Reason, now
	if err := b.upsert(ctx, workflows.StatusCancelling, "cancelling: "+in.Reason); err != nil {
		return b.state, err
	}
	if !b.cancelInCalendar(ctx) {
		return b.state, nil
	}
	b.followInShopCalendar(b.in.BookingID) // cancelled: its event goes
	b.state.Deposit = DepositNone
	switch {
	case b.in.Deposit > 0 && (free || before):
		if !b.refund(ctx) {
			return b.state, nil
		}
		b.state.Deposit = DepositRefunded
		b.state.Reason = fmt.Sprintf("cancelled at least %s before the slot: deposit refunded in full", b.window())
		if before && !free {
			b.state.Reason = "cancelled before the booking was confirmed to the customer: deposit refunded in full"
		}
	case b.in.Deposit > 0:
		b.state.Deposit = DepositKept
		b.state.Reason = fmt.Sprintf("cancelled less than %s before the slot: deposit kept", b.window())
	default:
		b.state.Reason = "cancelled; there was no deposit"
	}
	if b.versions.GetVersion(ctx, versionPublishBeforeTelling, workflow.DefaultVersion, 1) >= 1 {
		err := b.upsert(ctx, workflows.StatusCancelled, b.state.Reason)
		b.tell(ctx)
		return b.state, err
	}
	b.tell(ctx)
	return b.state, b.upsert(ctx, workflows.StatusCancelled, b.state.Reason)
}

// versionCancellingAtOnce: a cancel publishes Cancelling as soon as it is
// taken, before it waits for a reminder being sent. Before, the booking
// read Confirmed through that wait, and a customer who wrote the same wish
// right after cancelling was told "ist bereits in Bearbeitung" and booked
// nothing (the chaos drill: a reminder held up by a killed worker).
const versionCancellingAtOnce = "publish-cancelling-at-once"

// versionPublishBeforeTelling: the booking is published as cancelled
// before its cancellation message is reserved. Before, the message could
// reach the customer while the lifecycle still read Cancelling, and a
// customer who asked for the same slot again at once was merged into the
// cancelled booking ("already booked", nothing booked: the chaos drill's
// rebooks, 2 false answers and 3 lost in 1000 bookings).
const versionPublishBeforeTelling = "publish-cancel-before-telling"

// versionRefundInFull: a cancel sent with RefundInFull refunds the
// deposit inside the cancellation window too.
const versionRefundInFull = "cancel-refund-in-full"

// versionCancelAfterMoveReview: a cancel that waited for a move which
// ended in review opens a cancellation_request case next to the move's.
const versionCancelAfterMoveReview = "cancel-after-move-review"

// cancelWishInReview records the cancel a person must carry out: its own
// cancellation_request case, naming the move's case, so the review queue
// shows both wishes for the booking (the customer was told staff have
// the cancellation).
func (b *booking) cancelWishInReview(ctx workflow.Context, in CancelRequest, at time.Time) {
	details := map[string]any{
		"situation": "cancel asked during a move that ended in review", "cancel_reason": in.Reason,
		"asked_at": at, "move_case": b.state.ReviewCase, "booking_id": b.state.BookingID,
	}
	caseID, err := workflows.OpenCaseWith(ctx, b.tuning, b.in.Tenant, "cancel-after-move", review.ReasonCancellationRequest, details)
	if err != nil {
		workflow.GetLogger(ctx).Error("cancel during a move in review: case not opened", "error", err)
		b.state.Reason += "; a cancel asked meanwhile could not be recorded: " + err.Error()
		return
	}
	b.state.CancelCase = caseID
	b.state.Reason += "; the customer then asked to cancel: review case " + caseID
}

func (b *booking) window() time.Duration {
	if b.in.CancellationWindow > 0 {
		return b.in.CancellationWindow
	}
	return DefaultCancellationWindow
}

// cancelInCalendar cancels the booking (keyed; a cancelled one is
// success) and retries an outage until done. A final failure hands the
// booking to a person and leaves the deposit alone.
func (b *booking) cancelInCalendar(ctx workflow.Context) bool {
	const id = "cancel-booking"
	var step activities.Step
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, b.tuning, id, "Cancel booking "+b.in.BookingID),
		act.CancelBooking, activities.CancelBookingInput{Tenant: b.in.Tenant, BookingID: b.in.BookingID, Reference: b.calendarRef()}).Get(ctx, &step)
	b.record(ctx, "cancel booking", id, step, err)
	if err != nil {
		b.needsReview(ctx, id, "the calendar did not cancel the booking", err)
		return false
	}
	return true
}

// refund gives the captured deposit back with one keyed refund; an
// intent the appointment did not name is found by the reference (and a
// captured one refunded by VoidDeposit).
func (b *booking) refund(ctx workflow.Context) bool {
	const id = "refund-deposit"
	rctx := workflows.CompensationCtx(ctx, b.tuning, id, "Refund deposit of "+b.in.Reference)
	var step activities.Step
	var err error
	if b.in.IntentID != "" {
		err = workflow.ExecuteActivity(rctx, act.RefundDeposit,
			activities.IntentInput{Tenant: b.in.Tenant, Reference: b.in.Reference, IntentID: b.in.IntentID}).Get(ctx, &step)
	} else {
		var res activities.IntentResult
		err = workflow.ExecuteActivity(rctx, act.VoidDeposit,
			activities.IntentInput{Tenant: b.in.Tenant, Reference: b.in.Reference}).Get(ctx, &res)
		step = res.Step
	}
	b.record(ctx, "refund deposit", id, step, err)
	if err != nil {
		b.needsReview(ctx, id, "the booking is cancelled but the refund failed", err)
		return false
	}
	b.state.RefundID = step.DownstreamID
	return true
}

// tell sends the one cancellation message; its failure does not undo the
// cancellation, it is visible in the step table.
func (b *booking) tell(ctx workflow.Context) {
	const id = "send-cancellation"
	lang := b.in.Terms.Lang()
	data := tenants.MessageData{
		Service: b.in.Terms.Label(b.in.Service), When: tenants.When(b.in.SlotStart, b.in.Timezone, lang),
		Booking: b.in.BookingID, Amount: tenants.Money{Amount: b.in.Deposit, Currency: b.in.Currency}.Format(lang),
	}
	name := tenants.TemplateBookingCancelled
	switch b.state.Deposit {
	case DepositRefunded:
		name = tenants.TemplateBookingCancelledRefunded
	case DepositKept:
		name = tenants.TemplateBookingCancelledKept
	}
	step, err := workflows.SendMessage(ctx, b.tuning, id, "Send cancellation", activities.ConfirmationInput{
		Tenant: b.in.Tenant, Reference: b.in.Reference, Channel: workflows.ReplyChannel(b.in.Channel), Customer: b.in.Customer,
		Kind: MessageKindCancellation, SendBy: b.in.SlotStart,
	}.Compose(b.in.Terms, name, data))
	b.record(ctx, "send cancellation", id, step, err)
	b.state.MessageID = step.DownstreamID
}

// needsReview opens a compensation_failed case for a step that could not
// be completed and publishes NeedsReview: never a final status that hides
// a live booking or a deposit not refunded.
func (b *booking) needsReview(ctx workflow.Context, step, what string, cause error) {
	b.state.Reason = what + ": " + cause.Error()
	caseID, err := workflows.OpenCase(ctx, b.tuning, b.in.Tenant, step, review.ReasonCompensationFailed, cause)
	if err != nil {
		workflow.GetLogger(ctx).Error("open review case", "step", step, "error", err)
	} else {
		b.state.ReviewCase = caseID
		b.state.Reason += "; review case " + caseID
	}
	if err := b.upsert(ctx, workflows.StatusNeedsReview, b.state.Reason); err != nil {
		workflow.GetLogger(ctx).Error("publish NeedsReview", "error", err)
	}
}
