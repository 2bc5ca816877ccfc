package appointment

import (
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// Change IDs of workflow.GetVersion: runs recorded before a change replay
// the old commands.
const (
	// versionCancelUntilCommit: a cancel is honoured after confirm and
	// after capture too, and one that arrives after commit opens a
	// cancellation_request case instead of being dropped.
	versionCancelUntilCommit = "cancel-honoured-until-commit"
	// versionCloseIntentLands: CloseIntent retries until done, and a final
	// failure opens a compensation_failed case.
	versionCloseIntentLands = "close-intent-retries-until-done"
	// versionPublishCancelling: a cancelled appointment shows Cancelling
	// while its compensations run, so a wish that meets it is told the
	// booking is ending instead of "bereits in Bearbeitung" (dedup reads
	// the status; BookingTarget).
	versionPublishCancelling = "appointment-publishes-cancelling"
)

// end undoes what the saga did, closes the intent and publishes the final
// status. A compensation or close that could not be completed leaves the
// booking NeedsReview with the case a person works from, never a final
// status that hides a live hold, authorisation or captured deposit.
func (a *appointment) end(ctx workflow.Context, o *outcome) State {
	a.showCancelling(ctx, o)
	err := a.saga.Compensate(ctx)
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	status, reason := o.status, o.reason
	switch {
	case err != nil && !a.saga.Durable:
		reason += "; compensation failed: " + err.Error() // as recorded before the change
	case err != nil && a.childCase != "":
		// The payment saga opened the case for the same deposit the
		// appointment's own void failed on: one case for a person, not two.
		status, reason = workflows.StatusNeedsReview, reason+"; compensation failed: "+err.Error()+"; review case "+a.childCase
		a.state.ReviewCase = a.childCase
	case err != nil:
		status, reason = workflows.StatusNeedsReview, reason+"; compensation failed: "+err.Error()
		caseID, cerr := workflows.OpenCase(dctx, a.tuning, a.req.Tenant, "compensation", review.ReasonCompensationFailed, err)
		a.noteCase(dctx, caseID, cerr)
		reason += "; review case " + a.state.ReviewCase
	case a.saga.Durable && a.childCase != "":
		// The payment saga could not void or refund and opened the case.
		status, reason = workflows.StatusNeedsReview, reason+"; deposit compensation failed: review case "+a.childCase
		a.state.ReviewCase = a.childCase
	}
	if cerr := a.closeIntent(dctx); cerr != "" {
		status, reason = workflows.StatusNeedsReview, reason+"; "+cerr
	}
	a.offerAlternatives(dctx, o)
	a.tellLinkExpired(dctx, o)
	a.tellNotBooked(dctx, o, status)
	// A cancel that arrived after the step that failed needs nothing more.
	for a.cancelRequested() {
	}
	a.state.Reason = reason
	if err := a.upsert(dctx, status, "ended: "+reason); err != nil {
		workflow.GetLogger(ctx).Error("publish final status", "status", status, "error", err)
	}
	return a.state
}

// showCancelling publishes Cancelling before a cancelled appointment's
// compensations, which can take minutes through an outage.
func (a *appointment) showCancelling(ctx workflow.Context, o *outcome) {
	if o.status != workflows.StatusCancelled || a.versions.GetVersion(ctx, versionPublishCancelling, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	a.show(dctx, workflows.StatusCancelling, "cancelling: "+o.reason)
}

// closeIntent lets the same wish later start a new attempt instead of
// merging into this ended appointment ("bereits in Bearbeitung" and
// nothing happens). It is retried until done; if it still fails, a person
// must know: the returned text says so ("" when closed).
func (a *appointment) closeIntent(ctx workflow.Context) string {
	in := activities.CloseIntentInput{Tenant: a.req.Tenant, IntentID: a.req.IntentID, WorkflowID: a.state.Reference}
	const id, summary = "close-intent", "Close the intent: no booking"
	if a.versions.GetVersion(ctx, versionCloseIntentLands, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// Recorded runs replay their single bounded attempt.
		if err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, a.tuning, id, summary), act.CloseIntent, in).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Error("close intent failed", "error", err)
		}
		return ""
	}
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, a.tuning, id, summary), act.CloseIntent, in).Get(ctx, nil)
	if err == nil {
		return ""
	}
	caseID, cerr := workflows.OpenCase(ctx, a.tuning, a.req.Tenant, id, review.ReasonCompensationFailed, err)
	a.noteCase(ctx, caseID, cerr)
	return "close intent failed: " + err.Error() + "; review case " + a.state.ReviewCase
}

// noteCase shows the case a person works from; a case that could not be
// opened either (a week of failures) is logged as the last resort, and
// the NeedsReview status still finds the booking.
func (a *appointment) noteCase(ctx workflow.Context, caseID string, err error) {
	if err != nil {
		workflow.GetLogger(ctx).Error("open review case", "error", err)
		return
	}
	a.state.ReviewCase = caseID
}

// noteChildCase remembers a compensation_failed case of the payment saga.
func (a *appointment) noteChildCase(p deposit.State) {
	if p.ReviewCase != "" {
		a.childCase = p.ReviewCase
	}
}

// cancelAfterCommit is how runs recorded before versionForwardLateCancel
// handle a cancel that arrived once the booking was confirmed and paid:
// a person cancels, from a cancellation_request case, and the booking
// stays Confirmed. New runs forward it to the lifecycle (late_cancel.go).
func (a *appointment) cancelAfterCommit(ctx workflow.Context) {
	if !a.cancelRequested() {
		return
	}
	for a.cancelRequested() { // one case however often the customer asked
	}
	caseID, err := workflows.OpenCase(ctx, a.tuning, a.req.Tenant, "cancellation-request", review.ReasonCancellationRequest, nil)
	a.noteCase(ctx, caseID, err)
}
