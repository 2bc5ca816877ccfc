package conversation

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// book takes the dedup decision about a checked wish and acts on it; a
// wish without an intent ID goes to a person.
func (c *conversation) book(ctx workflow.Context, ev InboundEvent, service string, start time.Time) {
	in, err := c.wishIntent(ctx, ev, service, start)
	if err != nil {
		if !c.startFailed(ctx, ev, in, err) {
			c.reply(ctx, ev, c.text(tenants.TemplateStartFailedRetry, tenants.MessageData{}))
		}
		return
	}
	c.decide(ctx, ev, in, "dedup-"+ev.EventID)
}

// versionKeyedIntentID: a wish's intent ID, and with it its appointment's
// workflow ID and business reference, is keyed by the customer key
// (IntentID) instead of a plain hash of the number, which anyone who saw
// the ID next to its service and slot could brute-force. Runs recorded
// before keep the IDs they derived; dedup still merges the same wish into
// their bookings (dedup.Intent.LegacyIntentID).
const versionKeyedIntentID = "keyed-intent-id"

// wishIntent is the dedup intent of a wish for service at start. An
// error: this run has no customer key (a conversation from before keys,
// under its legacy ID), and its wish is not booked under a plain hash of
// the number but handed to a person (startFailed).
func (c *conversation) wishIntent(ctx workflow.Context, ev InboundEvent, service string, start time.Time) (dedup.Intent, error) {
	in := dedup.Intent{
		Tenant: c.in.Tenant, Customer: c.in.Customer, Service: service, SlotStart: start.UTC(),
		Channel: string(ev.Channel), EventID: ev.EventID, ConversationID: c.id,
	}
	legacy := workflows.LegacyIntentID(c.in.Tenant, c.in.Customer, service, "", start)
	if c.versions.GetVersion(ctx, versionKeyedIntentID, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		in.IntentID = legacy
	} else {
		id, err := workflows.IntentID(c.in.Tenant, c.in.CustomerKey, service, "", start)
		if err != nil {
			return in, fmt.Errorf("wish %s not booked, the conversation has no customer key: %w", ev.EventID, err)
		}
		in.IntentID, in.LegacyIntentID = id, legacy
	}
	in.WorkflowID = appointment.WorkflowID(c.in.Tenant, in.IntentID)
	return in, nil
}

// versionWishOutlastsOutage: the dedup decision of a booking wish asks
// until the database answers (same key, within Tuning.ReconcileTimeout).
// Before, it had the step budget (about 43 s): a wish that arrived just
// before a two-minute database failover was answered "ein Mitarbeiter
// meldet sich" with no case for anyone and dropped (the chaos drill: 37
// of 1000 bookings).
const versionWishOutlastsOutage = "wish-outlasts-outage"

// decideCtx is the options of the dedup decision: keyed by the event, so
// asking again can only find the decision already taken.
func (c *conversation) decideCtx(ctx workflow.Context, activityID string) workflow.Context {
	if c.versions.GetVersion(ctx, versionWishOutlastsOutage, workflow.DefaultVersion, 1) >= 1 {
		return workflows.ReconcileCtx(ctx, workflows.Tuning{}.WithDefaults(), activityID, "Cross-channel dedup decision")
	}
	return c.opts(ctx, activityID, "Cross-channel dedup decision")
}

func (c *conversation) decide(ctx workflow.Context, ev InboundEvent, in dedup.Intent, activityID string) {
	var d dedup.Decision
	if err := workflow.ExecuteActivity(c.decideCtx(ctx, activityID), act.DecideDedup, in).Get(ctx, &d); err != nil {
		c.decideFailed(ctx, ev, in, err)
		return
	}
	workflows.ObservePhase(ctx, c.in.Tenant, telemetry.PhaseDedupDecided, ev.ReceivedAt)
	slot := c.slot(in.Service, in.SlotStart)
	switch {
	case d.Kind == dedup.Merge && d.Ending:
		// The booking the wish met is being cancelled: nothing will stand
		// under it, so "in Bearbeitung" would be false.
		c.reply(ctx, ev, c.text(tenants.TemplateBeingCancelled, slot))
	case d.Kind == dedup.Merge:
		c.reply(ctx, ev, c.text(tenants.TemplateInProgress, slot))
	case d.Kind == dedup.Review:
		c.in.Pending = append(c.in.Pending, PendingDecision{CaseID: d.ReviewCase, Intent: in, Channel: ev.Channel})
		c.publishReview(ctx)
		c.reply(ctx, ev, c.text(tenants.TemplateSimilarRequest, slot))
	default:
		in.WorkflowID = d.WorkflowID // a new attempt after a failed one has its own ID
		if err := c.start(ctx, in, ev); err != nil && c.startFailed(ctx, ev, in, err) {
			return
		}
		c.reply(ctx, ev, c.text(tenants.TemplateBookingStarted, slot))
	}
}

// start launches the appointment saga for the wish ev carried; it
// outlives the conversation's runs.
func (c *conversation) start(ctx workflow.Context, in dedup.Intent, ev InboundEvent) error {
	ch := ev.Channel
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            in.WorkflowID,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		StaticSummary:         fmt.Sprintf("%s for %s at %s", in.Service, mask.Phones(in.Customer), in.SlotStart.Format(time.RFC3339)),
		TypedSearchAttributes: appointment.StartAttributes(workflows.CustomerAttributes(ctx, c.versions, in.Customer, c.in.CustomerKey), appointment.Request{Channel: ch, Service: in.Service, SlotStart: in.SlotStart}),
	})
	amount, currency := c.deposit(in.Service)
	f := workflow.ExecuteChildWorkflow(cctx, appointment.WorkflowName, appointment.Request{
		Tenant: in.Tenant, Customer: in.Customer, CustomerKey: c.in.CustomerKey, Service: in.Service, SlotStart: in.SlotStart, Channel: ch, IntentID: in.IntentID,
		DepositAmount: amount, Currency: currency, PaymentMethod: c.in.PaymentMethod, Timezone: c.timezone(),
		DeliberateSecond: in.Separate, Terms: c.in.Terms, AcceptedAt: ev.ReceivedAt,
	})
	err := f.GetChildWorkflowExecution().Get(ctx, nil)
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &started) {
		return nil // the same intent's appointment runs already: enough
	}
	return err
}

// resolve continues an intent that waited for a duplicate review.
func (c *conversation) resolve(ctx workflow.Context, d workflows.ReviewDecision) {
	for i, p := range c.in.Pending {
		if p.CaseID != d.CaseID {
			continue
		}
		c.in.Pending = append(c.in.Pending[:i], c.in.Pending[i+1:]...)
		c.publishReview(ctx)
		ev := InboundEvent{EventID: p.Intent.EventID + ":" + d.CaseID, Channel: p.Channel}
		switch d.Action {
		case review.ActionSeparate:
			in := p.Intent
			in.Separate = true
			c.decide(ctx, ev, in, "dedup-separate-"+d.CaseID)
		case review.ActionMerge:
			c.reply(ctx, ev, c.text(tenants.TemplateRequestsMerged, tenants.MessageData{}))
		default:
			c.reply(ctx, ev, c.text(tenants.TemplateSecondNotBooked, tenants.MessageData{}))
		}
		return
	}
}
