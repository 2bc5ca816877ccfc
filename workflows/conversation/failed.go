package conversation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// A wish the conversation could not check or start goes to a person, and
// the customer is told so only when a case stands behind the promise.

// versionDedupFailureReviewed: a wish whose dedup decision failed for
// good (a final error, or an outage past Tuning.ReconcileTimeout) opens a
// review case that carries the wish before the customer is told "ein
// Mitarbeiter meldet sich"; without a case the customer is asked to write
// again. Before, that promise had no case behind it and the wish was gone.
const versionDedupFailureReviewed = "dedup-failure-reviewed"

// decideFailed hands a wish that could not be checked to a person.
func (c *conversation) decideFailed(ctx workflow.Context, ev InboundEvent, in dedup.Intent, cause error) {
	if c.versions.GetVersion(ctx, versionDedupFailureReviewed, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		c.reply(ctx, ev, c.text(tenants.TemplateCheckFailed, tenants.MessageData{}))
		return
	}
	workflow.GetLogger(ctx).Error("dedup decision failed", "event", ev.EventID, "error", cause)
	details := map[string]any{"wish": in, "event_id": ev.EventID, "channel": string(ev.Channel), "error": cause.Error()}
	if _, err := workflows.OpenCaseWith(ctx, workflows.Tuning{}.WithDefaults(), c.in.Tenant, "decide-"+ev.EventID, review.ReasonUnknownOutcome, details); err != nil {
		workflow.GetLogger(ctx).Error("open review case", "error", err)
		c.reply(ctx, ev, c.text(tenants.TemplateStartFailedRetry, tenants.MessageData{}))
		return
	}
	c.reply(ctx, ev, c.text(tenants.TemplateCheckFailed, tenants.MessageData{}))
}

// versionStartFailureReviewed: an appointment that could not be started
// opens a review case instead of a "die Bestätigung folgt" with nothing
// behind it.
const versionStartFailureReviewed = "conversation-start-failure-reviewed"

// startFailed hands a wish whose appointment could not be started to a
// person and tells the customer so; false for runs recorded before the
// change, which replied as if it had started.
func (c *conversation) startFailed(ctx workflow.Context, ev InboundEvent, in dedup.Intent, cause error) bool {
	if c.versions.GetVersion(ctx, versionStartFailureReviewed, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	workflow.GetLogger(ctx).Error("appointment not started", "workflow_id", in.WorkflowID, "error", cause)
	if _, err := workflows.OpenCase(ctx, workflows.Tuning{}.WithDefaults(), c.in.Tenant, "start-"+ev.EventID, review.ReasonUnknownOutcome, cause); err != nil {
		workflow.GetLogger(ctx).Error("open review case", "error", err)
		c.reply(ctx, ev, c.text(tenants.TemplateStartFailedRetry, tenants.MessageData{}))
		return true
	}
	c.reply(ctx, ev, c.text(tenants.TemplateStartFailedReview, tenants.MessageData{}))
	return true
}
