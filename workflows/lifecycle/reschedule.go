package lifecycle

import (
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// Reschedule: move a confirmed booking to another slot (docs/lifecycle.md,
// "Reschedule"). The new slot is held and confirmed before the old booking
// is cancelled, so the customer never stands without a booking: a failure
// before the new booking is confirmed undoes the new one and leaves the old
// one alone; a failure to cancel the old one is retried like a
// compensation and finally handed to a person.

// versionReschedule: the booking takes the reschedule Update and its run
// loop waits on timers a move can interrupt. Runs started before it keep
// the fixed timers of the recorded histories and refuse a reschedule.
const versionReschedule = "booking-reschedule"

// Error types of a reschedule the booking refuses; nothing was done.
const (
	// ErrTypeNotReschedulable: the booking is over, cancelled, waits for a
	// person, or its slot has begun.
	ErrTypeNotReschedulable = "NotReschedulable"
	// ErrTypeInvalidReschedule: the request itself is wrong (no start, a
	// start in the past, a slot the calendar cannot offer at all).
	ErrTypeInvalidReschedule = "InvalidReschedule"
	// ErrTypeRescheduleFailed: the calendar could not be reached; the
	// booking is unchanged and the request may be repeated.
	ErrTypeRescheduleFailed = "RescheduleFailed"
)

// MessageKindRescheduled prefixes the outbox kind of the message telling
// the customer a move: "rescheduled_1" for the first move, one per move.
const MessageKindRescheduled = "rescheduled_"

// moveMark separates the appointment's workflow ID from a move's number
// in the calendar reference of a moved booking ("<id>#move-1"); the
// reconciler maps such a reference back to its appointment.
const moveMark = reference.MoveMark

// maxResourceID bounds the resource ID stored in the history.
const maxResourceID = 200

// Move is one reschedule carried out: from which slot to which, the
// calendar booking it produced and the reference it is held under.
type Move struct {
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	BookingID string    `json:"booking_id"`
	// OldBookingID is the calendar booking the move cancelled.
	OldBookingID string    `json:"old_booking_id"`
	Reference    string    `json:"reference"`
	At           time.Time `json:"at"`
}

// MoveReference is the calendar reference of the n-th move of the
// appointment appointmentID: the calendar allows one active reservation per
// reference, and the old booking holds the appointment's own until the new
// one is confirmed.
func MoveReference(appointmentID string, n int) string {
	return appointmentID + moveMark + strconv.Itoa(n)
}

// move is one reschedule under way.
type move struct {
	n      int // the attempt: names the activities and the reference
	ref    string
	req    RescheduleRequest
	oldID  string
	oldRef string
	from   time.Time
}

// validateReschedule refuses, before anything is recorded, a move of a
// booking that cannot move and a request that cannot be a slot.
func (b *booking) validateReschedule(ctx workflow.Context, in RescheduleRequest) error {
	if b.version == workflow.DefaultVersion {
		return temporal.NewApplicationError("this booking was confirmed before bookings could be moved: cancel it and book the new slot", ErrTypeNotReschedulable)
	}
	switch now := workflow.Now(ctx); {
	case in.Start.IsZero():
		return temporal.NewApplicationError("start is required (RFC 3339)", ErrTypeInvalidReschedule)
	case !in.Start.After(now):
		return temporal.NewApplicationError("the new start "+in.Start.UTC().Format(time.RFC3339)+" is not in the future", ErrTypeInvalidReschedule)
	case len(in.ResourceID) > maxResourceID:
		return temporal.NewApplicationError(fmt.Sprintf("resource_id longer than %d bytes", maxResourceID), ErrTypeInvalidReschedule)
	}
	return b.reschedulable(ctx)
}

// reschedulable says whether the booking as it stands can move.
func (b *booking) reschedulable(ctx workflow.Context) error {
	switch b.state.Status {
	case workflows.StatusCancelled, workflows.StatusCancelling, workflows.StatusCompleted, workflows.StatusNoShow:
		return temporal.NewApplicationError("the booking is "+string(b.state.Status)+": it cannot be moved", ErrTypeNotReschedulable)
	case workflows.StatusNeedsReview:
		return temporal.NewApplicationError("a change of this booking waits for a person (review case "+b.state.ReviewCase+")", ErrTypeNotReschedulable)
	}
	if !workflow.Now(ctx).Before(b.in.SlotStart) {
		return temporal.NewApplicationError("the appointment has begun: it cannot be moved", ErrTypeNotReschedulable)
	}
	return nil
}

// reschedule moves the booking once: hold the new slot, confirm it, cancel
// the old booking. It waits for a cancel or another move under way, and
// answers the state unchanged for a move to the slot it already has.
func (b *booking) reschedule(ctx workflow.Context, in RescheduleRequest) (State, error) {
	if err := workflow.Await(ctx, func() bool { return !b.cancelling && !b.moving }); err != nil {
		return b.state, err
	}
	if err := b.reschedulable(ctx); err != nil {
		return b.state, err
	}
	if in.Start.Equal(b.in.SlotStart) && (in.ResourceID == "" || in.ResourceID == b.in.ResourceID) {
		return b.state, nil
	}
	b.moving = true
	defer func() { b.moving = false }()
	// A reminder being sent goes first: it states the old time, the move's
	// message then the new one.
	if err := workflow.Await(ctx, func() bool { return !b.reminding }); err != nil {
		return b.state, err
	}
	b.attempts++
	mv := &move{n: b.attempts, ref: MoveReference(b.in.Reference, b.attempts), req: in,
		oldID: b.in.BookingID, oldRef: b.calendarRef(), from: b.in.SlotStart}
	undo := workflows.Saga{Versions: b.versions}
	booked, err := b.placeNew(ctx, mv, &undo)
	if err != nil {
		if cerr := undo.Compensate(ctx); cerr != nil {
			b.needsReview(ctx, b.moveID(mv, "undo"), "the move failed and its new reservation could not be undone", cerr)
		}
		return b.state, err
	}
	b.applyMove(ctx, mv, booked)
	if !b.cancelOld(ctx, mv) {
		b.followInShopCalendar(b.in.BookingID) // the old one is live too, for a person to settle
		return b.state, nil
	}
	// The old event goes before the new is written: in one calendar (the
	// same resource) the event then ends at the new slot.
	b.followInShopCalendar(mv.oldID, b.in.BookingID)
	b.tellMoved(ctx)
	return b.state, b.upsert(ctx, workflows.StatusConfirmed, "moved to "+b.in.SlotStart.UTC().Format(time.RFC3339))
}

// placeNew holds and confirms the new slot, registering each undo before
// its step (an answer lost on the way may hide a reservation that exists).
func (b *booking) placeNew(ctx workflow.Context, mv *move, undo *workflows.Saga) (activities.ConfirmHoldResult, error) {
	undo.Add("release new hold", func(ctx workflow.Context) error {
		id := b.moveID(mv, "release")
		var step activities.Step
		err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, b.tuning, id, "Release the hold of "+mv.ref), act.ReleaseHold,
			activities.ReleaseHoldInput{Tenant: b.in.Tenant, Reference: mv.ref}).Get(ctx, &step)
		b.recordUndo(ctx, "release new hold", id, step, err)
		return err
	})
	id := b.moveID(mv, "hold")
	var hold activities.HoldSlotResult
	err := workflow.ExecuteActivity(b.moveStepCtx(ctx, id, "Hold "+b.in.Service+" at "+mv.req.Start.UTC().Format(time.RFC3339)),
		act.HoldSlot, activities.HoldSlotInput{
			Tenant: b.in.Tenant, Reference: mv.ref, ResourceID: mv.req.ResourceID, Service: b.in.Service,
			Customer: b.in.Customer, Start: mv.req.Start, DeliberateSecond: true,
		}).Get(ctx, &hold)
	b.record(ctx, "hold new slot", id, hold.Step, err)
	if err != nil {
		return activities.ConfirmHoldResult{}, moveRefused(err)
	}
	undo.Add("cancel new booking", func(ctx workflow.Context) error {
		id := b.moveID(mv, "cancel-new")
		var step activities.Step
		err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, b.tuning, id, "Cancel the booking of "+mv.ref), act.CancelBooking,
			activities.CancelBookingInput{Tenant: b.in.Tenant, Reference: mv.ref}).Get(ctx, &step)
		b.recordUndo(ctx, "cancel new booking", id, step, err)
		return err
	})
	id = b.moveID(mv, "confirm")
	var booked activities.ConfirmHoldResult
	err = workflow.ExecuteActivity(b.moveStepCtx(ctx, id, "Confirm hold "+hold.Hold.ID),
		act.ConfirmHold, activities.ConfirmHoldInput{Tenant: b.in.Tenant, HoldID: hold.Hold.ID}).Get(ctx, &booked)
	b.record(ctx, "confirm new slot", id, booked.Step, err)
	if err != nil {
		return activities.ConfirmHoldResult{}, moveRefused(err)
	}
	return booked, nil
}

// versionMoveOutlastsOutage: the new slot's hold and confirmation ask
// with their keys until the calendar answers (bounded by
// ReconcileTimeout), like the booking saga's. Before, they gave up after
// the step budget (about 45 s): in the chaos drill's two-minute
// PostgreSQL outage a move whose caller had been told "wird gerade
// ausgeführt" failed unseen, and the booking stayed at the old slot with
// nobody told.
const versionMoveOutlastsOutage = "move-outlasts-outage"

// moveStepCtx is the activity options of a move's hold and confirmation.
func (b *booking) moveStepCtx(ctx workflow.Context, id, summary string) workflow.Context {
	if b.versions.GetVersion(ctx, versionMoveOutlastsOutage, workflow.DefaultVersion, 1) >= 1 {
		return workflows.ReconcileCtx(ctx, b.tuning, id, summary)
	}
	return workflows.ActivityCtx(ctx, b.tuning, id, summary)
}

// moveRefused is the Update's error for a step that did not take the new
// slot: a taken slot with the alternatives to offer, a slot the calendar
// cannot offer at all, or an outage (the request may be repeated).
func moveRefused(err error) error {
	switch workflows.ErrorType(err) {
	case activities.ErrTypeSlotUnavailable:
		return temporal.NewApplicationError("the new slot is taken; the booking is unchanged", activities.ErrTypeSlotUnavailable,
			RescheduleRefused{Alternatives: workflows.AlternativesOf(err)})
	case activities.ErrTypeCalendarFinal, activities.ErrTypeAlreadyBooked:
		return temporal.NewApplicationError("the calendar refused the new slot: "+err.Error()+"; the booking is unchanged", ErrTypeInvalidReschedule)
	}
	return temporal.NewApplicationError("the calendar did not answer: "+err.Error()+"; the booking is unchanged", ErrTypeRescheduleFailed)
}

// applyMove makes the new booking the booking: the slot, the calendar
// booking, the search attribute and the timers of the run loop.
func (b *booking) applyMove(ctx workflow.Context, mv *move, booked activities.ConfirmHoldResult) {
	bk := booked.Booking
	b.in.BookingID, b.in.ResourceID, b.in.SlotStart, b.in.SlotEnd = bk.ID, bk.ResourceID, bk.Start, bk.End
	if bk.Start.IsZero() { // a calendar that did not report the slot
		b.in.SlotStart, b.in.SlotEnd = mv.req.Start, time.Time{}
	}
	if bk.ResourceID == "" {
		b.in.ResourceID = mv.req.ResourceID
	}
	b.state.BookingID, b.state.ResourceID, b.state.SlotStart = b.in.BookingID, b.in.ResourceID, b.in.SlotStart
	b.state.Moves = append(b.state.Moves, Move{From: mv.from, To: b.in.SlotStart, BookingID: b.in.BookingID,
		OldBookingID: mv.oldID, Reference: mv.ref, At: workflow.Now(ctx)})
	b.state.Reason = "moved from " + mv.from.UTC().Format(time.RFC3339) + " to " + b.in.SlotStart.UTC().Format(time.RFC3339) + "; the deposit carries over"
	b.planned, b.replanned = b.plan(workflow.Now(ctx)), true
	if err := b.upsert(ctx, workflows.StatusConfirmed, "moving: cancelling the old booking "+mv.oldID); err != nil {
		workflow.GetLogger(ctx).Error("publish the moved slot", "error", err)
	}
}

// cancelOld cancels the booking the move replaced, retried like a
// compensation; a final failure leaves two bookings, which a person
// settles from the review case.
func (b *booking) cancelOld(ctx workflow.Context, mv *move) bool {
	id := b.moveID(mv, "cancel-old")
	var step activities.Step
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, b.tuning, id, "Cancel the old booking "+mv.oldID), act.CancelBooking,
		activities.CancelBookingInput{Tenant: b.in.Tenant, BookingID: mv.oldID, Reference: mv.oldRef}).Get(ctx, &step)
	b.record(ctx, "cancel old booking", id, step, err)
	if err != nil {
		b.needsReview(ctx, id, "moved to "+b.in.BookingID+" but the old booking "+mv.oldID+" was not cancelled", err)
		return false
	}
	return true
}

// tellMoved sends one message per move with the new time; its failure
// does not undo the move, it is visible in the step table.
func (b *booking) tellMoved(ctx workflow.Context) {
	n := len(b.state.Moves)
	id := "reschedule-message-" + strconv.Itoa(n)
	lang := b.in.Terms.Lang()
	data := tenants.MessageData{Service: b.in.Terms.Label(b.in.Service), When: tenants.When(b.in.SlotStart, b.in.Timezone, lang), Booking: b.in.BookingID}
	if b.in.Deposit > 0 {
		data.Amount = tenants.Money{Amount: b.in.Deposit, Currency: b.in.Currency}.Format(lang)
	}
	step, err := workflows.SendMessage(ctx, b.tuning, id, "Tell the customer the new time", activities.ConfirmationInput{
		Tenant: b.in.Tenant, Reference: b.in.Reference, Channel: workflows.ReplyChannel(b.in.Channel), Customer: b.in.Customer,
		Kind: MessageKindRescheduled + strconv.Itoa(n), SendBy: b.in.SlotStart,
	}.Compose(b.in.Terms, tenants.TemplateBookingRescheduled, data))
	b.record(ctx, "send rescheduled", id, step, err)
}

// calendarRef is the reference the current calendar booking is held under.
func (b *booking) calendarRef() string {
	if n := len(b.state.Moves); n > 0 {
		return b.state.Moves[n-1].Reference
	}
	return b.in.Reference
}

// moveID names a move's activity ("reschedule-1-hold"): derived from the
// execution, so a retry reuses its key and another move gets new ones.
func (b *booking) moveID(mv *move, step string) string {
	return "reschedule-" + strconv.Itoa(mv.n) + "-" + step
}

// recordUndo records a compensation's step.
func (b *booking) recordUndo(ctx workflow.Context, name, id string, s activities.Step, err error) {
	b.record(ctx, name, id, s, err)
	if err == nil {
		b.state.Steps[len(b.state.Steps)-1].Result = "compensated"
	}
}
