package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
)

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

// compensation undoes one step; it must be idempotent.
type compensation struct {
	name string
	run  func(workflow.Context) error
}

// VersionDurableCompensation: compensations retry until they succeed
// (CompensationCtx) and a final failure opens a review case. Runs recorded
// before it replay with the step retry policy and a reason suffix.
const VersionDurableCompensation = "compensation-retries-until-done"

// Saga keeps the compensations of the steps taken so far.
type Saga struct {
	steps []compensation
	// Durable is set by Compensate: the compensations use CompensationCtx.
	Durable bool
	// Versions answers VersionDurableCompensation: the run's baseline, if
	// it took one (the zero value asks workflow.GetVersion).
	Versions Versions
}

// Add registers an undo before its step runs: a step whose answer was lost
// may still have happened.
func (s *Saga) Add(name string, run func(workflow.Context) error) {
	s.steps = append(s.steps, compensation{name, run})
}

// Clear forgets compensations once the saga has committed to its outcome.
func (s *Saga) Clear() { s.steps = nil }

// Compensate runs the compensations in reverse order in a disconnected
// context, so a cancelled workflow still undoes what it did. A failing
// compensation does not stop the others; its error is returned.
func (s *Saga) Compensate(ctx workflow.Context) error {
	if len(s.steps) > 0 {
		s.Durable = s.Versions.GetVersion(ctx, VersionDurableCompensation, workflow.DefaultVersion, 1) >= 1
	}
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

// Opts are the activity options of a compensation: retried until done in
// runs with VersionDurableCompensation, the step policy in older ones.
func (s *Saga) Opts(ctx workflow.Context, t Tuning, id, summary string) workflow.Context {
	if s.Durable {
		return CompensationCtx(ctx, t, id, summary)
	}
	return ActivityCtx(ctx, t, id, summary)
}

// OpenCase hands something the saga could not settle to a person: the
// case is opened with CompensationCtx (an outage delays it, it is never
// dropped) and its ID returned. step names the case's activity (its key).
func OpenCase(ctx workflow.Context, t Tuning, tenant, step string, reason review.Reason, cause error) (string, error) {
	details := map[string]any{}
	if cause != nil {
		details["error"] = cause.Error()
	}
	return OpenCaseWith(ctx, t, tenant, step, reason, details)
}

// OpenCaseWith is OpenCase with details of the caller's (the step and the
// run are added).
func OpenCaseWith(ctx workflow.Context, t Tuning, tenant, step string, reason review.Reason, details map[string]any) (string, error) {
	info := workflow.GetInfo(ctx)
	details["step"], details["run_id"] = step, info.WorkflowExecution.RunID
	var opened activities.Step
	err := workflow.ExecuteActivity(CompensationCtx(ctx, t, "open-review-"+step, "Open review case: "+string(reason)),
		act.OpenReviewCase, activities.ReviewInput{
			Tenant: tenant, WorkflowID: info.WorkflowExecution.ID, Reason: reason, Details: details,
		}).Get(ctx, &opened)
	if err != nil {
		return "", fmt.Errorf("open %s review case: %w", reason, err)
	}
	return opened.DownstreamID, nil
}

// IsFinal reports whether err is a decided downstream answer (not worth
// reconciling): a non-retryable application error or a cancellation.
func IsFinal(err error) bool {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return true
	}
	return temporal.IsCanceledError(err)
}

// ErrorType returns the application error type of err, or "".
func ErrorType(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Type()
	}
	return ""
}

// AwaitReview opens a review case for an unknown outcome and waits for a
// person's decision; after timeout it abandons. onOpen runs once the case
// is open (to publish NeedsReview).
func AwaitReview(ctx workflow.Context, t Tuning, tenant, step string, cause error, onOpen func(caseID string)) (review.Action, error) {
	info := workflow.GetInfo(ctx)
	var opened activities.Step
	err := workflow.ExecuteActivity(ActivityCtx(ctx, t, "open-review-"+step, "Open review case: "+step+" outcome unknown"),
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

func AsApplicationError(err error, target **temporal.ApplicationError) bool {
	return errors.As(err, target)
}

// AlternativesOf reads the free slots a slot_unavailable answer offered.
func AlternativesOf(err error) []time.Time {
	var appErr *temporal.ApplicationError
	if !AsApplicationError(err, &appErr) || !appErr.HasDetails() {
		return nil
	}
	var slots []struct {
		Start time.Time `json:"start"`
	}
	if appErr.Details(&slots) != nil {
		return nil
	}
	out := make([]time.Time, 0, len(slots))
	for _, s := range slots {
		out = append(out, s.Start)
	}
	return out
}
