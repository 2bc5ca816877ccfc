package lifecycle

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/workflows"
)

// No-shows (docs/lifecycle.md, "No-shows"): a member of staff marks a
// booking whose slot has begun as NoShow, during the slot or the linger
// day after it. The deposit is kept. Nothing needs capturing: an
// appointment reaches Confirmed (and starts this workflow with a Deposit)
// only after its payment saga reported Captured; every other payment
// outcome ends the appointment PaymentFailed and compensates. So the
// no_show Update only records the outcome; no customer message is sent.

// ErrTypeNotNoShow is the error type of a no_show the validator refuses:
// the slot has not begun, or the booking is cancelled or waits for a
// person. Nothing was done.
const ErrTypeNotNoShow = "NotNoShow"

// ErrTypeInvalidNoShow is the error type of a malformed no_show request.
const ErrTypeInvalidNoShow = "InvalidNoShow"

// versionNoShow marks histories whose booking took a no_show Update. The
// handler is registered for every run (registering emits no command, and
// bookings already running when this was deployed must take it too); the
// version is taken where the handler's first command is, so a later
// change of the handler can branch on it.
const versionNoShow = "booking-no-show"

// maxNoShowNote bounds the note stored in the history.
const maxNoShowNote = 500

// QueryCancelPolicy returns the booking's CancelPolicy: what a cancel
// would do with the deposit, asked before a person confirms one.
const QueryCancelPolicy = "cancel_policy"

// CancelPolicy is the refund policy the booking was confirmed under.
type CancelPolicy struct {
	// Deposit is the captured deposit (minor units); 0: nothing to refund.
	Deposit  int64              `json:"deposit"`
	Currency string             `json:"currency,omitempty"`
	Window   workflows.Duration `json:"window"`
	// FreeUntil is the last moment a cancel refunds the deposit in full.
	FreeUntil time.Time `json:"free_until"`
	SlotStart time.Time `json:"slot_start"`
}

// RefundsAt says whether a cancel arriving at t would refund the deposit,
// by the rule the cancel Update applies (cancel.go).
func (p CancelPolicy) RefundsAt(t time.Time) bool {
	return p.Deposit > 0 && !t.After(p.FreeUntil)
}

// setupStaff registers what staff use besides cancel: the no_show Update
// and the cancel_policy query. Neither emits a command.
func (b *booking) setupStaff(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryCancelPolicy, func() (CancelPolicy, error) {
		w := b.window()
		return CancelPolicy{Deposit: b.in.Deposit, Currency: b.in.Currency, Window: w,
			FreeUntil: b.in.SlotStart.Add(-w), SlotStart: b.in.SlotStart}, nil
	}); err != nil {
		return fmt.Errorf("register cancel policy query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateNoShow, b.noShow, workflow.UpdateHandlerOptions{
		Validator: b.validateNoShow,
	}); err != nil {
		return fmt.Errorf("register no_show update: %w", err)
	}
	return nil
}

// validateNoShow accepts a no_show once the slot has begun, while the
// booking is Confirmed (during the slot) or Completed (the linger day),
// and again for a NoShow booking (answered without acting).
func (b *booking) validateNoShow(ctx workflow.Context, in NoShowRequest) error {
	if len(in.Note) > maxNoShowNote {
		return temporal.NewApplicationError(fmt.Sprintf("note longer than %d bytes", maxNoShowNote), ErrTypeInvalidNoShow)
	}
	switch {
	case b.state.Status == workflows.StatusNoShow:
		return nil
	case b.cancelling || b.state.Status == workflows.StatusCancelling || b.state.Status == workflows.StatusCancelled:
		return temporal.NewApplicationError("the booking is cancelled ("+string(b.state.Status)+"): it cannot be marked as a no-show", ErrTypeNotNoShow)
	case b.state.Status == workflows.StatusNeedsReview:
		return temporal.NewApplicationError("a change of this booking waits for a person (review case "+b.state.ReviewCase+")", ErrTypeNotNoShow)
	case b.moving:
		return temporal.NewApplicationError("the booking is being moved to another slot: mark the no-show once the move is done", ErrTypeNotNoShow)
	case b.state.Status != workflows.StatusConfirmed && b.state.Status != workflows.StatusCompleted:
		return temporal.NewApplicationError("the booking is "+string(b.state.Status)+": it cannot be marked as a no-show", ErrTypeNotNoShow)
	}
	if now := workflow.Now(ctx); now.Before(b.in.SlotStart) {
		return temporal.NewApplicationError(fmt.Sprintf("the appointment has not begun (it starts %s, in %s): a no-show can be marked only once it has",
			b.in.SlotStart.UTC().Format(time.RFC3339), b.in.SlotStart.Sub(now).Round(time.Minute)), ErrTypeNotNoShow)
	}
	return nil
}

// noShow marks the booking NoShow (final) and keeps the deposit. It does
// not block, so two no_show Updates cannot interleave; a second one
// answers the same state.
func (b *booking) noShow(ctx workflow.Context, in NoShowRequest) (State, error) {
	if b.state.Status == workflows.StatusNoShow {
		return b.state, nil
	}
	b.versions.GetVersion(ctx, versionNoShow, workflow.DefaultVersion, 1) // a marker only (or the baseline's); see versionNoShow
	b.state.Deposit = DepositNone
	b.state.Reason = "marked as a no-show; there was no deposit"
	if b.in.Deposit > 0 {
		b.state.Deposit = DepositKept
		b.state.Reason = "marked as a no-show: deposit kept"
	}
	if in.Note != "" {
		b.state.Reason += " (note: " + in.Note + ")"
	}
	return b.state, b.upsert(ctx, workflows.StatusNoShow, b.state.Reason)
}
