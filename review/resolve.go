package review

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bookonce/bookonce/reference"
)

// SignalDecision is the signal that carries a reviewer's Decision to the
// workflow waiting on a case. The workflows receive it under this name
// (workflows.SignalReviewDecision); recorded histories hold it, so it
// never changes.
const SignalDecision = "review-decision"

// Decision resolves the review case a workflow waits on.
type Decision struct {
	CaseID string `json:"case_id"`
	Action Action `json:"action"`
}

// Actions lists every decision, in the order they are offered.
func Actions() []Action {
	return []Action{ActionMerge, ActionSeparate, ActionRetry, ActionAbandon, ActionProceed}
}

// ActionsFor are the decisions that fit a case's reason.
func ActionsFor(reason Reason) []Action {
	switch reason {
	case ReasonPotentialDuplicate:
		return []Action{ActionMerge, ActionSeparate, ActionAbandon}
	case ReasonUnknownOutcome:
		return []Action{ActionRetry, ActionProceed, ActionAbandon}
	case ReasonOrphanedEffect, ReasonCalendarConflict, ReasonCalendarConnection:
		// The person settled it by hand: kept (proceed) or undone (abandon).
		return []Action{ActionProceed, ActionAbandon}
	}
	return Actions()
}

// recordOnly reports whether no workflow waits for a case of reason: the
// person acted already, the decision is only recorded.
func recordOnly(reason Reason) bool {
	return reason == ReasonOrphanedEffect || reason == ReasonCalendarConflict || reason == ReasonCalendarConnection
}

// Join lists actions for people: "merge, separate, abandon".
func Join(actions []Action, sep string) string {
	s := make([]string, len(actions))
	for i, a := range actions {
		s[i] = string(a)
	}
	return strings.Join(s, sep)
}

// Errors of Resolver.Resolve besides ErrNotFound; match with errors.Is.
var (
	// ErrUnknownAction: the action is none of Actions().
	ErrUnknownAction = errors.New("unknown review action")
	// ErrActionDoesNotFit: the action is not one of ActionsFor the case's
	// reason (e.g. retry for a potential duplicate).
	ErrActionDoesNotFit = errors.New("review action does not fit the case")
	// ErrAlreadyResolved: the case was resolved with another action.
	ErrAlreadyResolved = errors.New("already resolved")
)

// ActionError is a refused action; it matches ErrUnknownAction or
// ErrActionDoesNotFit.
type ActionError struct {
	Action Action
	// Reason is the case's reason; "" for an unknown action.
	Reason Reason
}

func (e *ActionError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%q is not a review action; use %s", string(e.Action), Join(Actions(), ", "))
	}
	return fmt.Sprintf("a %s case can be resolved with %s, not %s", e.Reason, Join(ActionsFor(e.Reason), ", "), e.Action)
}

// Is matches the sentinel of the refusal.
func (e *ActionError) Is(target error) bool {
	if e.Reason == "" {
		return target == ErrUnknownAction
	}
	return target == ErrActionDoesNotFit
}

// SignalError says the waiting workflow was not told, so the decision
// is not recorded either: the case stays open; resolving again sends it
// again.
type SignalError struct{ Err error }

func (e *SignalError) Error() string { return "signal workflow: " + e.Err.Error() }
func (e *SignalError) Unwrap() error { return e.Err }

// Signaler delivers a signal to a workflow (a Temporal client.Client).
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// Resolver is the one way a reviewer's decision takes effect, whether it
// comes from the review API (and so the CLI) or the ops page: the action
// is checked against the case's reason, recorded once, and signalled to
// the waiting workflow.
type Resolver struct {
	Store    *Store
	Temporal Signaler
}

// Resolve signals action for the tenant's case id to the waiting
// workflow, then records it. Another tenant's case is ErrNotFound. Repeating a
// decision (a double click, a retry after a *SignalError) records nothing
// new and signals again: the workflow ignores a second decision for the
// same case. The reconciler's orphaned_effect cases have no waiting
// workflow (the saga ended), nor do calendar_conflict and
// calendar_connection cases: they are only recorded.
func (r *Resolver) Resolve(ctx context.Context, tenant, id string, action Action) (Case, error) {
	if !slices.Contains(Actions(), action) {
		return Case{}, &ActionError{Action: action}
	}
	c, err := r.Store.Get(ctx, id)
	if err != nil {
		return Case{}, err
	}
	if c.Tenant != tenant {
		return Case{}, ErrNotFound
	}
	if !slices.Contains(ActionsFor(c.Reason), action) {
		return c, &ActionError{Action: action, Reason: c.Reason}
	}
	if c.Status == "resolved" && c.Resolution != action {
		return c, fmt.Errorf("review case %s was %w as %s", id, ErrAlreadyResolved, c.Resolution)
	}
	// The workflow is told before the case is recorded as resolved: a
	// crash between the two leaves the case open, so the person (or a
	// retry) resolves it again and the workflow ignores the second
	// decision. Recorded first, a crash would leave a resolved case whose
	// workflow never heard of it.
	// Only a workflow in the tenant's own namespace is told; a case on any
	// other (none is opened so, but a row is data) is only recorded.
	if !recordOnly(c.Reason) && reference.Owned(tenant, c.WorkflowID) {
		if err := r.Temporal.SignalWorkflow(ctx, c.WorkflowID, "", SignalDecision, Decision{CaseID: c.ID, Action: action}); err != nil {
			return c, &SignalError{Err: err}
		}
	}
	return r.Store.Resolve(ctx, c.ID, action)
}
