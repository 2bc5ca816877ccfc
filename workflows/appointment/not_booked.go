package appointment

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// versionTellNotBooked: every ending of a booking the customer was told
// is under way ("die Bestätigung folgt") is told: not booked (a declined
// card, no authorisation in time, a hold that lapsed, a confirmation or
// capture that failed and was undone), or in a person's hands
// (NeedsReview, with its case). Before, only a lost slot (alternatives)
// and a lapsed payment link were told; the rest ended in silence.
const versionTellNotBooked = "tell-not-booked"

// tellNotBooked sends the ending of a booking that no other message of
// end() told: once per booking (its own outbox kind), never for a cancel
// (the customer or staff asked for it) or an existing booking.
func (a *appointment) tellNotBooked(ctx workflow.Context, o *outcome, status workflows.BookingStatus) {
	switch {
	case status == workflows.StatusConfirmed, status == workflows.StatusCancelled, status == workflows.StatusAlreadyBooked:
		return
	case status == workflows.StatusNeedsReview && a.state.ReviewCase == "":
		return // no case to promise a person from; the status shows it to staff
	case status != workflows.StatusNeedsReview && o.reason == reasonSlotUnavailable:
		return // offerAlternatives told
	case status != workflows.StatusNeedsReview && a.link && (o.reason == deposit.ReasonLinkExpired || strings.HasPrefix(o.reason, deposit.ReasonLinkUnavailable)):
		return // tellLinkExpired told
	}
	if a.versions.GetVersion(ctx, versionTellNotBooked, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	id, kind, name := "send-not-booked", activities.MessageKindNotBooked, tenants.TemplateNotBooked
	if status == workflows.StatusNeedsReview {
		id, kind, name = "send-in-review", activities.MessageKindInReview, tenants.TemplateInReview
	}
	step, err := workflows.SendMessage(ctx, a.tuning, id, "Tell the customer: "+kind, activities.ConfirmationInput{
		Tenant: a.req.Tenant, Reference: a.state.Reference, Channel: workflows.ReplyChannel(a.req.Channel), Customer: a.req.Customer,
		Kind: kind, SendBy: a.req.SlotStart,
	}.Compose(a.req.Terms, name, a.slot(a.req.SlotStart)))
	a.record("send "+kind, id, step, err)
}
