package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
)

// compensation undoes one step; it must be idempotent.
type compensation struct {
	name string
	run  func(workflow.Context) error
}

// saga keeps the compensations of the steps taken so far.
type saga struct {
	steps []compensation
}

// add registers an undo before its step runs: a step whose answer was lost
// may still have happened.
func (s *saga) add(name string, run func(workflow.Context) error) {
	s.steps = append(s.steps, compensation{name, run})
}

// clear forgets compensations once the saga has committed to its outcome.
func (s *saga) clear() { s.steps = nil }

// compensate runs the compensations in reverse order in a disconnected
// context, so a cancelled workflow still undoes what it did. A failing
// compensation does not stop the others; its error is returned.
func (s *saga) compensate(ctx workflow.Context) error {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	var errs []error
	for i := len(s.steps) - 1; i >= 0; i-- {
		if err := s.steps[i].run(dctx); err != nil {
			workflow.GetLogger(ctx).Error("compensation failed", "step", s.steps[i].name, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.steps[i].name, err))
		}
	}
	s.steps = nil
	return errors.Join(errs...)
}

// isFinal reports whether err is a decided downstream answer (not worth
// reconciling): a non-retryable application error or a cancellation.
func isFinal(err error) bool {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return true
	}
	return temporal.IsCanceledError(err)
}

// errorType returns the application error type of err, or "".
func errorType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// awaitReview opens a review case for an unknown outcome and waits for a
// person's decision; after timeout it abandons. onOpen runs once the case
// is open (to publish NeedsReview).
func awaitReview(ctx workflow.Context, t Tuning, tenant, step string, cause error, onOpen func(caseID string)) (review.Action, error) {
	info := workflow.GetInfo(ctx)
	var opened activities.Step
	err := workflow.ExecuteActivity(activityCtx(ctx, t, "open-review-"+step, "Open review case: "+step+" outcome unknown"),
		act.OpenReviewCase, activities.ReviewInput{
			Tenant: tenant, WorkflowID: info.WorkflowExecution.ID, Reason: review.ReasonUnknownOutcome,
			Details: map[string]any{"step": step, "error": cause.Error(), "run_id": info.WorkflowExecution.RunID},
		}).Get(ctx, &opened)
	if err != nil {
		return review.ActionAbandon, fmt.Errorf("open review case: %w", err)
	}
	onOpen(opened.DownstreamID)
	decisions := workflow.GetSignalChannel(ctx, SignalReviewDecision)
	action := review.ActionAbandon
	timer := workflow.NewTimer(ctx, t.ReviewTimeout)
	for decided := false; !decided; {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(decisions, func(c workflow.ReceiveChannel, _ bool) {
			var d ReviewDecision
			c.Receive(ctx, &d)
			// A decision for another (older) case is not this one's answer.
			if d.CaseID == "" || d.CaseID == opened.DownstreamID {
				action, decided = d.Action, true
			}
		})
		sel.AddFuture(timer, func(workflow.Future) { decided = true })
		sel.Select(ctx)
	}
	return action, nil
}

func asApplicationError(err error, target **temporal.ApplicationError) bool {
	return errors.As(err, target)
}
