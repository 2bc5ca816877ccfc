package conversation

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
)

// versionHandOver: a conversation under its keyed ID takes over the state
// of a conversation still running under the legacy ID, which hands it
// over and ends.
const versionHandOver = "conversation-legacy-handover"

// handOverWait bounds how long a keyed conversation holds its first
// events back for the legacy state; a state arriving later is still
// adopted (the main loop listens for it), only after those events.
const handOverWait = 2 * time.Minute

// moveChannels are the signals of the move, read by every run.
type moveChannels struct {
	handOver, takeOver workflow.ReceiveChannel
}

func newMoveChannels(ctx workflow.Context) moveChannels {
	return moveChannels{
		handOver: workflow.GetSignalChannel(ctx, activities.SignalHandOver),
		takeOver: workflow.GetSignalChannel(ctx, activities.SignalTakeOver),
	}
}

// keyed reports whether this run is the customer's conversation under its
// keyed ID (a legacy run has no key, and its ID holds the number).
func (c *conversation) keyed() bool {
	return c.in.CustomerKey != "" && c.id == WorkflowID(c.in.Tenant, c.in.CustomerKey)
}

// takeOverLegacy runs once in a keyed conversation's life, before its
// first event: if a conversation runs under the legacy ID, it is asked
// for its state, which is awaited for handOverWait so that a "Ja" sent
// after the upgrade confirms the offer made before it.
func (c *conversation) takeOverLegacy(ctx workflow.Context, m moveChannels) {
	if c.in.LegacyChecked || !c.keyed() {
		return
	}
	if c.versions.GetVersion(ctx, versionHandOver, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	c.in.LegacyChecked = true
	var asked bool
	err := c.read(ctx, "hand-over-ask", "Ask a conversation under the legacy ID for its state", act.AskHandOver,
		activities.AskHandOverInput{From: LegacyWorkflowID(c.in.Tenant, c.in.Customer), To: c.id}).Get(ctx, &asked)
	if err != nil {
		workflow.GetLogger(ctx).Error("legacy conversation not asked to hand over", "error", err)
		return
	}
	if !asked {
		return
	}
	var t activities.TakeOver
	if ok, _ := m.takeOver.ReceiveWithTimeout(ctx, handOverWait, &t); !ok {
		workflow.GetLogger(ctx).Warn("legacy conversation has not handed over yet; its state is adopted when it arrives")
		return
	}
	c.adopt(ctx, t)
}

// adopt merges a legacy conversation's state into this one: its seen
// event IDs, its offer, pending review decisions, awaited question and
// recent changes. What this run already has wins; a second delivery of the
// same state adds nothing.
func (c *conversation) adopt(ctx workflow.Context, t activities.TakeOver) {
	var old Input
	if err := json.Unmarshal(t.State, &old); err != nil {
		workflow.GetLogger(ctx).Error("legacy conversation state unreadable", "error", err)
		return
	}
	for _, id := range old.Seen {
		c.seen(id)
	}
	if c.in.Offer == nil {
		c.in.Offer = old.Offer
	}
	if c.in.Awaiting == nil {
		c.in.Awaiting = old.Awaiting
	}
	c.in.Changed = append(old.Changed, c.in.Changed...)
	for _, p := range old.Pending {
		if !c.hasPending(p.CaseID) {
			c.in.Pending = append(c.in.Pending, p)
		}
	}
	if len(old.Pending) > 0 {
		c.publishReview(ctx)
	}
	if c.in.Terms == nil {
		c.in.Terms = old.Terms
	}
}

func (c *conversation) hasPending(caseID string) bool {
	for _, p := range c.in.Pending {
		if p.CaseID == caseID {
			return true
		}
	}
	return false
}

// handOver ends a legacy run: everything buffered is handled first, then
// the state goes to the keyed conversation (with the open review cases
// pointed at it), and signals that still arrive are forwarded. Appointments
// and bookings started from here are abandoned children (they outlive
// this run and never signal it back), so nothing waits for them. A state
// that cannot be handed over leaves the conversation running where it is.
func (c *conversation) handOver(ctx workflow.Context, inbound, decisions workflow.ReceiveChannel) error {
	if c.versions.GetVersion(ctx, versionHandOver, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// Unreachable for recorded runs (none was asked); kept so the
		// commands below are only ever issued under the change ID.
		c.handTo = ""
		return workflow.NewContinueAsNewError(ctx, Workflow, c.in)
	}
	c.drainAll(ctx, inbound, decisions)
	state, err := json.Marshal(c.in)
	if err == nil {
		err = workflow.ExecuteActivity(workflows.CompensationCtx(ctx, workflows.Tuning{}.WithDefaults(), "hand-over-state", "Hand the state to the keyed conversation"),
			act.HandOverConversation, activities.HandOverInput{Tenant: c.in.Tenant, From: c.id, To: c.handTo, State: state}).Get(ctx, nil)
	}
	if err != nil {
		workflow.GetLogger(ctx).Error("conversation not handed over; it stays under its legacy ID", "error", err)
		c.handTo = ""
		return workflow.NewContinueAsNewError(ctx, Workflow, c.in)
	}
	c.forwardLate(ctx, inbound, decisions)
	return nil
}

// forwardLate passes signals that arrived during the hand-over on to the
// keyed conversation, until none is left; the run then ends.
func (c *conversation) forwardLate(ctx workflow.Context, inbound, decisions workflow.ReceiveChannel) {
	for {
		var ev InboundEvent
		var d workflows.ReviewDecision
		switch {
		case inbound.ReceiveAsync(&ev):
			c.forward(ctx, SignalInbound, "forward-"+ev.EventID, ev)
		case decisions.ReceiveAsync(&d):
			c.forward(ctx, workflows.SignalReviewDecision, "forward-decision-"+d.CaseID, d)
		default:
			return
		}
	}
}

// forward sends one late signal to the keyed conversation, which ignores
// an event ID or case it has seen, so the activity's retries are harmless.
func (c *conversation) forward(ctx workflow.Context, signal, activityID string, arg any) {
	raw, err := json.Marshal(arg)
	if err == nil {
		err = workflow.ExecuteActivity(workflows.CompensationCtx(ctx, workflows.Tuning{}.WithDefaults(), activityID, "Forward a late signal to the keyed conversation"),
			act.ForwardSignal, activities.ForwardInput{To: c.handTo, Signal: signal, Arg: raw}).Get(ctx, nil)
	}
	if err != nil {
		workflow.GetLogger(ctx).Error("late signal not forwarded", "signal", signal, "error", err)
	}
}

// listenMove adds the move's signals to the main loop's selector: a
// request to hand over ends a legacy run's loop (handTo), a state that
// arrives after handOverWait is adopted then.
func (c *conversation) listenMove(ctx workflow.Context, sel workflow.Selector, m moveChannels) {
	sel.AddReceive(m.handOver, func(ch workflow.ReceiveChannel, _ bool) {
		var h activities.HandOver
		ch.Receive(ctx, &h)
		c.askedToHandOver(ctx, h)
	})
	sel.AddReceive(m.takeOver, func(ch workflow.ReceiveChannel, _ bool) {
		var t activities.TakeOver
		ch.Receive(ctx, &t)
		c.adopt(ctx, t)
	})
}

// drainMove handles the move's signals buffered when a run continues as
// new, which would otherwise be lost with it.
func (c *conversation) drainMove(ctx workflow.Context, m moveChannels) {
	for {
		var h activities.HandOver
		if m.handOver.ReceiveAsync(&h) {
			c.askedToHandOver(ctx, h)
			continue
		}
		var t activities.TakeOver
		if m.takeOver.ReceiveAsync(&t) {
			c.adopt(ctx, t)
			continue
		}
		return
	}
}

// askedToHandOver records where a legacy run's state goes. A keyed run
// never hands over: it is where states go.
func (c *conversation) askedToHandOver(ctx workflow.Context, h activities.HandOver) {
	if c.keyed() || h.To == "" || h.To == c.id {
		workflow.GetLogger(ctx).Warn("hand-over request ignored", "to", h.To)
		return
	}
	c.handTo = h.To
}
