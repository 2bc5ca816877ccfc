package appointment

import (
	"cmp"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// changeAlreadyBooked versions the saga's answer to the calendar's
// customer_already_booked refusal (before it, the refusal was a plain
// rejection without a message).
const changeAlreadyBooked = "already-booked-links-existing"

// alreadyBooked ends a saga whose hold the calendar refused because the
// customer already has this appointment under another reference (a person
// booked it by hand; the agent replays the wish). It links the existing
// booking, charges nothing (no deposit is authorised before the hold),
// holds nothing of its own to release, and tells the customer once: the
// message is unique per reference and kind in the outbox.
func (a *appointment) alreadyBooked(ctx workflow.Context, refusal error) *outcome {
	var existing activities.ExistingBooking
	var appErr *temporal.ApplicationError
	if !workflows.AsApplicationError(refusal, &appErr) || !appErr.HasDetails() || appErr.Details(&existing) != nil {
		// The calendar refused without naming the booking: still already
		// booked, but a person should find which one.
		existing = activities.ExistingBooking{}
	}
	link := cmp.Or(existing.BookingID, existing.HoldID)
	a.state.ExistingBooking, a.state.ExistingReference = link, existing.Reference
	data := a.slot(a.req.SlotStart)
	data.Booking, data.Hold = existing.BookingID, existing.HoldID
	name := tenants.TemplateAlreadyBooked
	if existing.BookingID == "" && existing.HoldID != "" {
		name = tenants.TemplateAlreadyHeld
	}
	var step activities.Step
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, a.tuning, "send-already-booked", "Tell the customer: already booked"),
		act.SendConfirmation, activities.ConfirmationInput{
			Tenant: a.req.Tenant, Reference: a.state.Reference, Channel: workflows.ReplyChannel(a.req.Channel), Customer: a.req.Customer,
			Kind: activities.MessageKindAlreadyBooked,
		}.Compose(a.req.Terms, name, data)).Get(ctx, &step)
	a.record("send already booked", "send-already-booked", step, err)
	a.state.MessageID = step.DownstreamID
	reason := "already_booked: " + cmp.Or(link, "existing booking not named")
	if err != nil {
		reason += "; telling the customer failed: " + err.Error()
	}
	return &outcome{workflows.StatusAlreadyBooked, reason}
}
