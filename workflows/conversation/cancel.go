package conversation

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// A customer's cancellation wish ("stornieren", "absagen", "cancel").
//
// Until the booking lifecycle exists, the conversation honours a wish at
// once only when it is unambiguous and the booking is not yet confirmed:
// the customer has exactly one appointment and it is still in flight. It
// then sends that appointment the cancel signal, which the appointment
// honours at every step before Confirmed (Confirmed is its last command,
// so a running appointment is never past it). Every other case (already
// confirmed, several candidates, none found, a state that cannot be read)
// opens a review case so that a person acts, and the customer is told so.
//
// How the customer's appointments are found: the activity FindAppointments
// reads the customer's open booking intents from package dedup (every
// appointment any conversation run started, whatever the channel, and
// the only record that survives continue-as-new without being carried)
// and asks Temporal for each appointment's state. Tracking IDs in the
// conversation's state instead would miss appointments started before
// this version and grow the continue-as-new input.

// cancelSituation names why a wish needs a person; it goes into the case.
type cancelSituation string

const (
	cancelConfirmed      cancelSituation = "confirmed"
	cancelSeveral        cancelSituation = "several_candidates"
	cancelNone           cancelSituation = "no_booking_found"
	cancelUnknown        cancelSituation = "state_unknown"
	cancelLookupFailed   cancelSituation = "lookup_failed"
	cancelEndedMeanwhile cancelSituation = "ended_before_cancel_arrived"
)

// cancelCandidates sorts the customer's appointments by what a
// cancellation can do with them.
type cancelCandidates struct {
	inFlight, confirmed, unknown []activities.Appointment
}

func sortCandidates(found []activities.Appointment) cancelCandidates {
	var c cancelCandidates
	for _, ap := range found {
		switch {
		case !ap.Found:
			c.unknown = append(c.unknown, ap)
		case ap.Running:
			c.inFlight = append(c.inFlight, ap)
		case ap.Status == string(workflows.StatusConfirmed):
			c.confirmed = append(c.confirmed, ap)
		case ap.Status == string(workflows.StatusRejected), ap.Status == string(workflows.StatusCancelled), ap.Status == string(workflows.StatusPaymentFailed):
			// Ended without a booking: nothing to cancel.
		default:
			c.unknown = append(c.unknown, ap) // closed in another state (e.g. NeedsReview)
		}
	}
	return c
}

func (c cancelCandidates) all() []activities.Appointment {
	out := append(append(append([]activities.Appointment{}, c.inFlight...), c.confirmed...), c.unknown...)
	return out
}

// versionChangesOutlastOutage: the lookups and the review case a cancel
// or move wish needs ask until the database answers (same key, within
// Tuning.ReconcileTimeout). Before, they had the step budget (about 43 s):
// a wish that arrived just before a two-minute database failover was
// answered "write again in a few minutes" and dropped, although it had
// been accepted (the chaos drill: 8 cancels during the saga and 4 moves
// in 1000 bookings).
const versionChangesOutlastOutage = "changes-outlast-outage"

// untilAnswered is the options of a step a customer's change cannot do
// without: retried with its key until the downstream answers.
func (c *conversation) untilAnswered(ctx workflow.Context, id, summary string) workflow.Context {
	if c.versions.GetVersion(ctx, versionChangesOutlastOutage, workflow.DefaultVersion, 1) >= 1 {
		return workflows.ReconcileCtx(ctx, workflows.Tuning{}.WithDefaults(), id, summary)
	}
	return c.opts(ctx, id, summary)
}

// cancelWish cancels the one appointment in flight, or opens a review case.
func (c *conversation) cancelWish(ctx workflow.Context, ev InboundEvent) {
	c.in.Offer = nil // "ja, passt" after a cancellation confirms nothing
	var found []activities.Appointment
	if !c.findBookings(ctx, ev, &found) {
		return
	}
	cands := sortCandidates(found)
	all := cands.all()
	switch {
	case len(all) == 0:
		c.cancelReview(ctx, ev, cancelNone, nil, "", c.text(tenants.TemplateCancelNone, tenants.MessageData{}))
	case len(all) > 1:
		c.cancelReview(ctx, ev, cancelSeveral, all, "", c.text(tenants.TemplateCancelSeveral, tenants.MessageData{}))
	case len(cands.confirmed) == 1:
		ap := cands.confirmed[0]
		c.cancelReview(ctx, ev, cancelConfirmed, all, "", c.text(tenants.TemplateCancelConfirmed, c.slot(ap.Service, ap.SlotStart)))
	case len(cands.unknown) == 1:
		c.cancelReview(ctx, ev, cancelUnknown, all, "", c.text(tenants.TemplateCancelUnknown, tenants.MessageData{}))
	default:
		c.cancelInFlight(ctx, ev, cands.inFlight[0])
	}
}

// cancelInFlight signals the appointment; if it closed meanwhile (the
// signal finds no running workflow), a person must look.
func (c *conversation) cancelInFlight(ctx workflow.Context, ev InboundEvent, ap activities.Appointment) {
	slot := c.slot(ap.Service, ap.SlotStart)
	err := workflow.SignalExternalWorkflow(ctx, ap.WorkflowID, "", workflows.SignalCancel, nil).Get(ctx, nil)
	if err != nil {
		c.cancelReview(ctx, ev, cancelEndedMeanwhile, []activities.Appointment{ap}, err.Error(), c.text(tenants.TemplateCancelEndedMeanwhile, slot))
		return
	}
	c.reply(ctx, ev, c.text(tenants.TemplateCancelInFlight, slot))
}

// cancelReview opens a cancellation_request case on the conversation (the
// one workflow of the customer that stays; the appointments are in the
// details) and tells the customer. The case's key derives from the
// activity execution, so a retry opens no second case.
func (c *conversation) cancelReview(ctx workflow.Context, ev InboundEvent, why cancelSituation, aps []activities.Appointment, cause, text string) {
	details := map[string]any{"situation": string(why), "event_id": ev.EventID, "channel": string(ev.Channel)}
	if len(aps) > 0 {
		details["appointments"] = aps
	}
	if cause != "" {
		details["error"] = cause
	}
	var opened activities.Step
	err := workflow.ExecuteActivity(c.untilAnswered(ctx, "open-cancel-review-"+ev.EventID, "Open review case: cancellation request"), act.OpenReviewCase,
		activities.ReviewInput{Tenant: c.in.Tenant, WorkflowID: c.id, Reason: review.ReasonCancellationRequest, Details: details}).Get(ctx, &opened)
	if err != nil {
		workflow.GetLogger(ctx).Error("cancellation request: review case not opened", "event_id", ev.EventID, "error", err)
		c.reply(ctx, ev, c.text(tenants.TemplateCancelNotRecorded, tenants.MessageData{}))
		return
	}
	c.reply(ctx, ev, text)
}
