package conversation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// versionConsentKeywords: a message that is a STOP or START keyword
// (activities.Understood.Consent) changes what the shop may send the
// customer, instead of being read as a wish.
const versionConsentKeywords = "consent-keywords"

// consent records the customer's STOP or START and acknowledges it once:
// a repeated STOP while opted out changes nothing and is not answered
// again. The relay then holds back reminders (outbox, state suppressed);
// replies and the messages of the customer's own bookings still go out.
func (c *conversation) consent(ctx workflow.Context, ev InboundEvent, action consent.Action) {
	var changed bool
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, workflows.Tuning{}.WithDefaults(), "consent-"+ev.EventID, "Record the customer's "+string(action)),
		act.RecordConsent, consent.Change{Tenant: c.in.Tenant, Customer: c.in.Customer, Action: action, Channel: string(ev.Channel),
			EventID: ev.EventID, At: ev.ReceivedAt}).Get(ctx, &changed)
	switch {
	case err != nil:
		// Not stored: saying it was would be false, and reminders would
		// still come. The customer is asked to write again.
		workflow.GetLogger(ctx).Error("consent not recorded", "event", ev.EventID, "action", action, "error", err)
		c.reply(ctx, ev, c.text(tenants.TemplateConsentNotRecorded, tenants.MessageData{}))
	case !changed:
		workflow.GetLogger(ctx).Info("consent unchanged: not acknowledged again", "event", ev.EventID, "action", action)
	case action == consent.OptOut:
		c.reply(ctx, ev, c.text(tenants.TemplateOptedOut, tenants.MessageData{}))
	default:
		c.reply(ctx, ev, c.text(tenants.TemplateOptedIn, tenants.MessageData{}))
	}
}
