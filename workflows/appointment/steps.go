package appointment

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// versionHoldReconcileOutlastsOutage: the lookup that settles a hold
// whose answer was lost asks until the calendar answers (same key, no
// attempt limit) within Tuning.ReconcileTimeout. Before, it had the
// step's budget (about 43 s), so a calendar database failing over for two
// minutes sent every booking then placing its hold to a person: the chaos
// drill's outage opened a review case for each of about 110 bookings.
const versionHoldReconcileOutlastsOutage = "hold-reconcile-outlasts-outage"

// reconcileCtx is the options of the lookup that settles an unknown hold.
func (a *appointment) reconcileCtx(ctx workflow.Context, id, summary string) workflow.Context {
	if a.versions.GetVersion(ctx, versionHoldReconcileOutlastsOutage, workflow.DefaultVersion, 1) >= 1 {
		return workflows.ReconcileCtx(ctx, a.tuning, id, summary)
	}
	return workflows.ActivityCtx(ctx, a.tuning, id, summary)
}

// holdSlot places the hold. An outcome still unknown after the retries is
// reconciled by the reference, asking until the calendar answers; if it
// says nothing happened the hold is tried once more (the calendar proved
// absence, so a new key cannot hold twice); if it cannot say within the
// reconcile bound, or the second try is unknown too, a person decides.
func (a *appointment) holdSlot(ctx workflow.Context, base string) (string, *outcome) {
	if err := a.upsert(ctx, workflows.StatusHolding, "placing a hold in the calendar"); err != nil {
		return "", &outcome{workflows.StatusRejected, err.Error()}
	}
	for attempt := 1; ; attempt++ {
		id := base
		if attempt > 1 {
			id = fmt.Sprintf("%s-%d", base, attempt)
		}
		var res activities.HoldSlotResult
		err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, a.tuning, id, "Hold "+a.req.Service+" at "+a.req.SlotStart.UTC().Format(time.RFC3339)),
			act.HoldSlot, activities.HoldSlotInput{
				Tenant: a.req.Tenant, Reference: a.state.Reference, ResourceID: a.req.ResourceID,
				Service: a.req.Service, Customer: a.req.Customer, Start: a.req.SlotStart, DeliberateSecond: a.req.DeliberateSecond,
				TTL: a.holdTTL(),
			}).Get(ctx, &res)
		a.record("hold slot", id, res.Step, err)
		if err == nil {
			return res.Hold.ID, nil
		}
		if workflows.IsFinal(err) {
			if workflows.ErrorType(err) == activities.ErrTypeAlreadyBooked &&
				a.versions.GetVersion(ctx, changeAlreadyBooked, workflow.DefaultVersion, 1) == 1 {
				return "", a.alreadyBooked(ctx, err)
			}
			o := a.fromError(err)
			if o.reason == "slot_unavailable" {
				a.state.Alternatives = workflows.AlternativesOf(err)
			}
			return "", o
		}
		var found activities.FindHoldResult
		ferr := workflow.ExecuteActivity(a.reconcileCtx(ctx, "find-"+id, "Reconcile hold by reference"),
			act.FindHold, activities.FindHoldInput{Tenant: a.req.Tenant, Reference: a.state.Reference}).Get(ctx, &found)
		if ferr == nil && found.Found {
			return found.Hold.ID, nil
		}
		if ferr == nil && attempt == 1 {
			continue // the calendar answered: nothing was held, try once more
		}
		action, rerr := workflows.AwaitReview(ctx, a.tuning, a.req.Tenant, id, err, func(caseID string) {
			a.state.ReviewCase = caseID
			a.show(ctx, workflows.StatusNeedsReview, "hold outcome unknown: waiting for review case "+caseID)
		})
		a.state.ReviewCase = ""
		if rerr != nil || action != review.ActionRetry {
			return "", &outcome{workflows.StatusRejected, fmt.Sprintf("hold outcome unknown; review decided %s", action)}
		}
		a.show(ctx, workflows.StatusHolding, "retrying the hold after review")
	}
}

// confirm turns the hold into a booking; a hold that expired meanwhile is
// placed once more and confirmed, else the booking is rejected.
// versionConfirmOutlastsOutage: confirming a hold (and reconciling a
// confirmation whose answer was lost) retries like a compensation, with
// the same key and no attempt limit, until the calendar answers. Before,
// the step's budget (about 43 s) ended in "outcome unknown" and the saga
// released a slot its customer had just paid for: the chaos drill's
// two-minute PostgreSQL outage lost a quarter of its bookings that way.
// A hold that expires meanwhile is still answered hold_expired (final).
const versionConfirmOutlastsOutage = "confirm-outlasts-outage"

// confirmCtx is the confirmation's activity options.
func (a *appointment) confirmCtx(ctx workflow.Context, id, summary string) workflow.Context {
	if a.versions.GetVersion(ctx, versionConfirmOutlastsOutage, workflow.DefaultVersion, 1) >= 1 {
		return workflows.CompensationCtx(ctx, a.tuning, id, summary)
	}
	return workflows.ActivityCtx(ctx, a.tuning, id, summary)
}

func (a *appointment) confirm(ctx workflow.Context) *outcome {
	for round := 1; round <= 2; round++ {
		id := "confirm-hold"
		if round > 1 {
			id = "confirm-hold-2"
		}
		if err := a.upsert(ctx, workflows.StatusConfirming, "confirming hold "+a.state.HoldID); err != nil {
			return &outcome{workflows.StatusRejected, err.Error()}
		}
		var res activities.ConfirmHoldResult
		err := workflow.ExecuteActivity(a.confirmCtx(ctx, id, "Confirm hold "+a.state.HoldID),
			act.ConfirmHold, activities.ConfirmHoldInput{Tenant: a.req.Tenant, HoldID: a.state.HoldID}).Get(ctx, &res)
		a.record("confirm hold", id, res.Step, err)
		if err == nil {
			a.state.BookingID, a.slotEnd = res.Booking.ID, res.Booking.End
			return nil
		}
		if !workflows.IsFinal(err) {
			// Unknown: the calendar may have booked. Look the hold up.
			var found activities.FindHoldResult
			ferr := workflow.ExecuteActivity(a.confirmCtx(ctx, "find-"+id, "Reconcile confirmation by reference"),
				act.FindHold, activities.FindHoldInput{Tenant: a.req.Tenant, Reference: a.state.Reference}).Get(ctx, &found)
			if ferr == nil && found.Found && found.Hold.BookingID != "" {
				a.state.BookingID, a.slotEnd = found.Hold.BookingID, found.Hold.End
				return nil
			}
			return &outcome{workflows.StatusRejected, "confirmation outcome unknown: " + err.Error()}
		}
		if workflows.ErrorType(err) != activities.ErrTypeHoldExpired || round == 2 {
			return a.fromError(err)
		}
		hold, o := a.holdSlot(ctx, "rehold-slot")
		if o != nil {
			return o
		}
		a.state.HoldID = hold
	}
	return &outcome{workflows.StatusRejected, "hold_expired"}
}

// confirmation sends the confirmation once, until the slot begins; its
// failure does not undo a paid booking, it is visible in the step table.
func (a *appointment) confirmation(ctx workflow.Context) {
	data := a.slot(a.req.SlotStart)
	data.Booking = a.state.BookingID
	step, err := workflows.SendMessage(ctx, a.tuning, "send-confirmation", "Send confirmation", activities.ConfirmationInput{
		Tenant: a.req.Tenant, Reference: a.state.Reference, Channel: workflows.ReplyChannel(a.req.Channel), Customer: a.req.Customer,
		AcceptedAt: a.req.AcceptedAt, SendBy: a.req.SlotStart,
	}.Compose(a.req.Terms, tenants.TemplateConfirmation, data))
	a.record("send confirmation", "send-confirmation", step, err)
	a.state.MessageID = step.DownstreamID
}

func (a *appointment) release(ctx workflow.Context) error {
	var step activities.Step
	// By reference, not ID: a hold whose answer was lost is found too.
	err := workflow.ExecuteActivity(a.saga.Opts(ctx, a.tuning, "release-hold", "Release holds of "+a.state.Reference),
		act.ReleaseHold, activities.ReleaseHoldInput{Tenant: a.req.Tenant, Reference: a.state.Reference}).Get(ctx, &step)
	a.recordCompensation("release hold", "release-hold", step, err)
	return err
}

// versionLinkNeverMade: a payment saga whose link could not be created
// (an outage of the payment API) has nothing to void, and says so
// (deposit.State.NothingHeld). Before, the appointment then voided by
// reference, and a search that lags writes never proved the absence: the
// booking's compensation retried for a week and the customer's wish
// stayed open.
const versionLinkNeverMade = "link-never-made"

func (a *appointment) voidDeposit(ctx workflow.Context) error {
	intentID := a.state.IntentID
	undone := false // the payment saga ended with nothing held
	if a.cardAuth != nil {
		intentID = a.cardIntent(ctx)
	}
	if a.child != nil {
		// The payment saga may still be authorising (its answer not yet
		// back): tell it to void and wait until it has finished, so an
		// authorisation that lands after the cancellation is voided too.
		// The saga's own waits are bounded (retries, review timeout).
		// A saga that has already ended refuses the signal; its result
		// still says what it left.
		err := a.signalPayment(ctx, deposit.Void)
		if err != nil && a.versions.GetVersion(ctx, deposit.VersionVoidUnpaidLink, workflow.DefaultVersion, 1) >= 1 {
			err = nil
		}
		if err == nil {
			var final deposit.State
			if a.child.Get(ctx, &final) == nil {
				a.state.Payment = final.Status
				a.noteChildCase(final)
				if final.IntentID != "" {
					intentID = final.IntentID
				}
				undone = final.IntentID == "" && (final.Status == deposit.Voided || final.Status == deposit.Expired)
				if !undone && final.IntentID == "" && final.NothingHeld &&
					a.versions.GetVersion(ctx, versionLinkNeverMade, workflow.DefaultVersion, 1) >= 1 {
					undone = true
				}
			}
		}
	}
	// The saga that owned the deposit voided it or proved there is none
	// (its link closed unpaid): a search by reference, which a lagging
	// one (Stripe's) never lets prove absent, would retry for ever.
	if undone && intentID == "" && a.versions.GetVersion(ctx, deposit.VersionVoidUnpaidLink, workflow.DefaultVersion, 1) >= 1 {
		a.recordCompensation("void deposit", "void-deposit", activities.Step{}, nil)
		return nil
	}
	// Older runs voided by reference alone, which a lagging search can
	// miss (a deposit captured while the cancel landed stayed captured).
	if a.versions.GetVersion(ctx, deposit.VersionVoidKnownIntent, workflow.DefaultVersion, 1) < 1 {
		intentID = ""
	}
	var res activities.IntentResult
	err := workflow.ExecuteActivity(a.saga.Opts(ctx, a.tuning, "void-deposit", "Void deposit of "+a.state.Reference),
		act.VoidDeposit, activities.IntentInput{Tenant: a.req.Tenant, Reference: a.state.Reference, IntentID: intentID}).Get(ctx, &res)
	a.recordCompensation("void deposit", "void-deposit", res.Step, err)
	return err
}

func (a *appointment) cancelBooking(ctx workflow.Context) error {
	var step activities.Step
	err := workflow.ExecuteActivity(a.saga.Opts(ctx, a.tuning, "cancel-booking", "Cancel booking of "+a.state.Reference),
		act.CancelBooking, activities.CancelBookingInput{Tenant: a.req.Tenant, BookingID: a.state.BookingID, Reference: a.state.Reference}).Get(ctx, &step)
	a.recordCompensation("cancel booking", "cancel-booking", step, err)
	return err
}

func (a *appointment) record(name, activityID string, s activities.Step, err error) {
	a.state.Steps = append(a.state.Steps, workflows.KeyedStep(a.info, name, activityID, s, err))
}

func (a *appointment) recordCompensation(name, activityID string, s activities.Step, err error) {
	a.record(name, activityID, s, err)
	if err == nil {
		a.state.Steps[len(a.state.Steps)-1].Result = "compensated"
	}
}

// slot is the message data naming the appointment's service and a slot.
func (a *appointment) slot(start time.Time) tenants.MessageData {
	return tenants.MessageData{Service: a.req.Terms.Label(a.req.Service), When: tenants.When(start, a.req.Timezone, a.req.Terms.Lang())}
}
