package deposit

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

type payment struct {
	req    Request
	tuning workflows.Tuning
	state  State
	saga   workflows.Saga
	// Link mode: the link as last read, the reads so far (each read is
	// its own activity), and whether the appointment asked to void.
	last      activities.PaymentLinkResult
	reads     int
	voidAsked bool
}

func (p *payment) setup(ctx workflow.Context) error {
	p.state = State{Status: Authorizing, Steps: []workflows.Step{}}
	return workflow.SetQueryHandler(ctx, workflows.QueryStatus, func() (State, error) { return p.state, nil })
}

func (p *payment) run(ctx workflow.Context) (State, error) {
	if p.linkMode(ctx) {
		return p.runLink(ctx)
	}
	p.saga.Add("void deposit", func(ctx workflow.Context) error { return p.void(ctx) })
	intent, err := p.card().Authorize(ctx)
	if err != nil {
		if uerr := p.undo(ctx); uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "void: "+uerr.Error())
		}
		if workflows.ErrorType(err) == activities.ErrTypePaymentDeclined {
			return p.finish(ctx, Declined, "card_declined")
		}
		return p.finish(ctx, Failed, err.Error())
	}
	p.state.IntentID = intent
	return p.authorized(ctx)
}

// authorized continues from a live authorisation (p.state.IntentID), by
// card or by payment link: tell the parent, wait for its decision, then
// capture or void.
func (p *payment) authorized(ctx workflow.Context) (State, error) {
	if ctx.Err() != nil { // cancelled while authorising: undo what landed
		if uerr := p.undo(ctx); uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "void: "+uerr.Error())
		}
		return p.finish(ctx, Voided, "cancelled")
	}
	p.set(ctx, Authorized, "")
	p.notifyParent(ctx)

	decision, timedOut := p.awaitDecision(ctx)
	for timedOut && ctx.Err() == nil && p.parentStillDeciding(ctx) {
		decision, timedOut = p.awaitDecision(ctx)
	}
	if ctx.Err() != nil { // the appointment was cancelled
		if uerr := p.undo(ctx); uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "void: "+uerr.Error())
		}
		return p.finish(ctx, Voided, "cancelled")
	}
	if timedOut || decision == Void {
		reason := "voided by the appointment"
		if timedOut {
			reason = "no decision in time"
		}
		if err := p.undo(ctx); err != nil {
			return p.finish(ctx, Failed, "void: "+err.Error())
		}
		return p.finish(ctx, Voided, reason)
	}
	if err := p.card().Capture(ctx, p.state.IntentID); err != nil {
		// The compensation voids, or refunds what was captured after all.
		if uerr := p.undo(ctx); uerr != nil && p.saga.Durable {
			return p.finish(ctx, Failed, "capture: "+err.Error()+"; void or refund: "+uerr.Error())
		}
		return p.finish(ctx, Failed, "capture: "+err.Error())
	}
	p.saga.Clear()
	return p.finish(ctx, Captured, "")
}

// card is the saga's card steps, reporting into its state.
func (p *payment) card() Card {
	c := CardOf(p.req, p.tuning)
	c.Record = p.record
	c.Reviewing = func(ctx workflow.Context, _ string) {
		p.set(ctx, NeedsReview, "deposit outcome unknown: waiting for review")
		p.notifyParent(ctx)
	}
	c.Retrying = func(ctx workflow.Context) { p.set(ctx, Authorizing, "retrying after review") }
	return c
}

func (p *payment) awaitDecision(ctx workflow.Context) (Action, bool) {
	timeout := p.req.DecisionTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	workflow.SetCurrentDetails(ctx, "authorised; waiting for the appointment to capture or void")
	var action Action
	timedOut := false
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, SignalDecision), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &action)
	})
	sel.AddFuture(workflow.NewTimer(timerCtx, timeout), func(workflow.Future) { timedOut = true })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	return action, timedOut
}

// VersionDecisionAwaitsParent: the saga whose decision bound passes while
// its appointment still runs (confirming through a calendar outage) tells
// the appointment it is still authorised and waits another round; it
// voids on its own only once the appointment is gone. Before, it voided
// at the bound: the calendar then confirmed, the capture found the saga
// ended, and the confirmed booking was undone without a word.
const VersionDecisionAwaitsParent = "decision-awaits-parent"

// parentStillDeciding reports whether the appointment that started the
// saga still runs: the status signal (Authorized, again) reaches it. A
// closed appointment refuses the signal; a saga without a parent decides
// alone, as before.
func (p *payment) parentStillDeciding(ctx workflow.Context) bool {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil || workflow.GetVersion(ctx, VersionDecisionAwaitsParent, workflow.DefaultVersion, 1) < 1 {
		return false
	}
	err := workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalStatus, p.state).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("no decision in time and the appointment is gone: voiding", "appointment", parent.ID, "error", err)
		return false
	}
	workflow.GetLogger(ctx).Info("no decision in time; the appointment still runs: waiting another round", "appointment", parent.ID)
	return true
}

func (p *payment) void(ctx workflow.Context) error {
	var res activities.IntentResult
	err := workflow.ExecuteActivity(p.saga.Opts(ctx, p.tuning, "void-deposit", "Void deposit of "+p.req.Reference),
		act.VoidDeposit, activities.IntentInput{Tenant: p.req.Tenant, Reference: p.req.Reference, IntentID: p.state.IntentID}).Get(ctx, &res)
	p.record("void deposit", "void-deposit", res.Step, err)
	return err
}

// undo runs the saga's compensation (void, or refund what was captured).
// Where compensations retry until done, an error is final: a person gets a
// compensation_failed case, named in the state. Older runs replay as
// recorded (their callers ignored some of these errors).
func (p *payment) undo(ctx workflow.Context) error {
	err := p.saga.Compensate(ctx)
	if err == nil || !p.saga.Durable {
		return err
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	caseID, cerr := workflows.OpenCase(dctx, p.tuning, p.req.Tenant, "void-deposit", review.ReasonCompensationFailed, err)
	if cerr != nil {
		workflow.GetLogger(ctx).Error("open review case", "error", cerr)
		return fmt.Errorf("%w; %w", err, cerr)
	}
	p.state.ReviewCase = caseID
	return fmt.Errorf("%w (review case %s)", err, caseID)
}

func (p *payment) set(ctx workflow.Context, s Status, details string) {
	p.state.Status = s
	if details != "" {
		workflow.SetCurrentDetails(ctx, details)
	}
}

func (p *payment) finish(ctx workflow.Context, s Status, reason string) (State, error) {
	// Hints the saga no longer needs (a second event about the same
	// payment) are consumed, so the run does not end with unhandled
	// signals. Receiving adds nothing to the history: replay-safe.
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	for events.ReceiveAsync(nil) {
	}
	p.state.Reason = reason
	p.set(ctx, s, "ended: "+string(s))
	p.notifyParent(ctx)
	return p.state, nil
}

// notifyParent signals the appointment; it may have ended, which is fine:
// the appointment also reads the saga's end from the child's result.
// A failed signal is logged.
func (p *payment) notifyParent(ctx workflow.Context) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil {
		return
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	if err := workflow.SignalExternalWorkflow(dctx, parent.ID, "", SignalStatus, p.state).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Info("payment status not signalled to the appointment", "status", p.state.Status, "error", err)
	}
}

func (p *payment) record(name, activityID string, s activities.Step, err error) {
	step := workflows.StepFrom(name, activityID, s)
	if err != nil {
		step.Result, step.Error = workflows.FailedResult(err), err.Error()
	}
	p.state.Steps = append(p.state.Steps, step)
}
