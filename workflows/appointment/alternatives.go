package appointment

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// reasonSlotUnavailable is the calendar's problem code for a slot whose
// capable resources are all taken.
const reasonSlotUnavailable = "slot_unavailable"

// versionOfferAlternatives: an appointment that lost its slot tells the
// customer which slots are free.
const versionOfferAlternatives = "offer-alternatives"

// kindAlternatives is the outbox kind of the message that offers other
// slots: one per booking, like the confirmation.
const kindAlternatives = "alternatives"

// offerAlternatives tells a customer who lost the race for a slot which
// free slots the calendar offered. Without it the conversation's "die
// Bestätigung folgt" is the last word the customer hears: a lost request
// from where they stand.
func (a *appointment) offerAlternatives(ctx workflow.Context, o *outcome) {
	if o.reason != reasonSlotUnavailable {
		return
	}
	// Histories recorded before this message existed end without it.
	if a.versions.GetVersion(ctx, versionOfferAlternatives, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	var step activities.Step
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, a.tuning, "send-alternatives", "Offer alternative slots"),
		act.SendConfirmation, activities.ConfirmationInput{
			Tenant: a.req.Tenant, Reference: a.state.Reference, Channel: workflows.ReplyChannel(a.req.Channel), Customer: a.req.Customer,
			Kind: kindAlternatives,
		}.Compose(a.req.Terms, tenants.TemplateAlternatives, a.alternativesData())).Get(ctx, &step)
	a.record("offer alternatives", "send-alternatives", step, err)
}

// alternativesData names the wished slot and the free ones, in the
// business time zone, as the conversation states times.
func (a *appointment) alternativesData() tenants.MessageData {
	data := a.slot(a.req.SlotStart)
	for _, t := range a.state.Alternatives {
		data.Alternatives = append(data.Alternatives, a.slot(t).When)
	}
	return data
}
