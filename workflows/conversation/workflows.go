package conversation

import (
	"cmp"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

const (
	maxSeen             = 200
	eventsBeforeRestart = 100
)

// Change IDs of the conversation (workflow.GetVersion): runs that reached
// the changed point before the change replay the old commands.
const (
	// versionDrainAllSignals: before continuing as new, drain the review
	// decisions too, not only the inbound events.
	versionDrainAllSignals = "conversation-drain-all-signals"
	// versionCancelWish: a cancellation wish cancels the appointment in
	// flight or opens a review case, instead of a reply with no case.
	versionCancelWish = "conversation-cancel-wish"
	// versionLocalReads: understanding a message, checking it and asking
	// a legacy conversation to hand over run as local activities (see
	// conversation.read).
	versionLocalReads = "conversation-local-reads"
)

// Workflow is the long-lived dialogue with one customer. Each
// inbound event is understood, checked against the catalogue, and run
// through one cross-channel dedup decision: merge, review or a new
// AppointmentWorkflow. It answers on the channel the customer used last.
func Workflow(ctx workflow.Context, in Input) error {
	c := &conversation{in: in, id: workflow.GetInfo(ctx).WorkflowExecution.ID, versions: Baseline.Take(ctx)}
	inbound := workflow.GetSignalChannel(ctx, SignalInbound)
	decisions := workflow.GetSignalChannel(ctx, workflows.SignalReviewDecision)
	move := newMoveChannels(ctx)
	c.takeOverLegacy(ctx, move)
	restartAfter := in.EventsBeforeRestart
	if restartAfter <= 0 {
		restartAfter = eventsBeforeRestart
	}
	for handled := 0; handled < restartAfter && c.handTo == ""; {
		sel := workflow.NewSelector(ctx)
		c.listenMove(ctx, sel, move)
		sel.AddReceive(inbound, func(ch workflow.ReceiveChannel, _ bool) {
			var ev InboundEvent
			ch.Receive(ctx, &ev)
			if c.seen(ev.EventID) {
				return
			}
			handled++
			c.handle(ctx, ev)
		})
		sel.AddReceive(decisions, func(ch workflow.ReceiveChannel, _ bool) {
			var d workflows.ReviewDecision
			ch.Receive(ctx, &d)
			c.resolve(ctx, d)
		})
		sel.Select(ctx)
	}
	// Handle what arrived meanwhile, then start afresh so the history stays
	// small. A signal left in a channel when the run continues as new is
	// lost, so every channel this workflow reads is drained.
	if c.versions.GetVersion(ctx, versionDrainAllSignals, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		c.drainInbound(ctx, inbound)
	} else {
		c.drainAll(ctx, inbound, decisions)
		c.drainMove(ctx, move)
	}
	if c.handTo != "" {
		return c.handOver(ctx, inbound, decisions)
	}
	return workflow.NewContinueAsNewError(ctx, Workflow, c.in)
}

// drainInbound is the drain of runs that started before
// versionDrainAllSignals: it leaves review decisions behind.
func (c *conversation) drainInbound(ctx workflow.Context, inbound workflow.ReceiveChannel) {
	for {
		var ev InboundEvent
		if !inbound.ReceiveAsync(&ev) {
			return
		}
		if !c.seen(ev.EventID) {
			c.handle(ctx, ev)
		}
	}
}

// drainAll handles every buffered inbound event and review decision until
// both channels are empty. Handling runs activities, during which more
// signals may arrive; the loop ends only when a pass finds nothing. A
// decision is resolved here rather than carried: its pending intent is in
// c.in.Pending either way, and resolving now answers the customer sooner.
func (c *conversation) drainAll(ctx workflow.Context, inbound, decisions workflow.ReceiveChannel) {
	for {
		var ev InboundEvent
		if inbound.ReceiveAsync(&ev) {
			if !c.seen(ev.EventID) {
				c.handle(ctx, ev)
			}
			continue
		}
		var d workflows.ReviewDecision
		if decisions.ReceiveAsync(&d) {
			c.resolve(ctx, d)
			continue
		}
		return
	}
}

type conversation struct {
	in Input
	id string
	// handTo is the keyed conversation a legacy run hands over to, once
	// asked (handover.go).
	handTo string
	// versions answers the run's GetVersion calls (Baseline).
	versions workflows.Versions
}

func (c *conversation) seen(id string) bool {
	for _, s := range c.in.Seen {
		if s == id {
			return true
		}
	}
	c.in.Seen = append(c.in.Seen, id)
	if len(c.in.Seen) > maxSeen {
		c.in.Seen = c.in.Seen[len(c.in.Seen)-maxSeen:]
	}
	return false
}

func (c *conversation) opts(ctx workflow.Context, id, summary string) workflow.Context {
	return workflows.ActivityCtx(ctx, workflows.Tuning{}.WithDefaults(), id, summary)
}

func (c *conversation) handle(ctx workflow.Context, ev InboundEvent) {
	workflows.ObservePhase(ctx, c.in.Tenant, telemetry.PhaseDelivered, ev.ReceivedAt)
	var u activities.Understood
	if err := c.read(ctx, "extract-"+ev.EventID, "Understand message", act.ExtractIntent,
		activities.ExtractInput{Tenant: c.in.Tenant, Text: ev.Text, ReceivedAt: ev.ReceivedAt, Channel: string(ev.Channel)}).Get(ctx, &u); err != nil {
		c.reply(ctx, ev, c.text(tenants.TemplateNotUnderstood, tenants.MessageData{}))
		return
	}
	if u.Terms != nil {
		c.in.Terms = u.Terms // the tenant as configured now (a reload reaches running conversations)
	}
	if u.Consent != "" && c.versions.GetVersion(ctx, versionConsentKeywords, workflow.DefaultVersion, 1) >= 1 {
		c.consent(ctx, ev, u.Consent)
		return
	}
	r := u.Result
	if c.in.Awaiting != nil && c.followUp(ctx, ev, &r) {
		return
	}
	switch r.Kind {
	case intent.KindCancel:
		if c.versions.GetVersion(ctx, versionCancelWish, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			c.reply(ctx, ev, c.text(tenants.TemplateCancelAskBooking, tenants.MessageData{}))
			return
		}
		if c.changesOn(ctx) {
			c.cancelBooking(ctx, ev, r)
			return
		}
		c.cancelWish(ctx, ev)
		return
	case intent.KindReschedule:
		if c.changesOn(ctx) {
			c.rescheduleWish(ctx, ev, r)
			return
		}
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(u.Question), c.text(tenants.TemplateUnclear, tenants.MessageData{})))
		return
	case intent.KindUnclear:
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(u.Question), c.text(tenants.TemplateUnclear, tenants.MessageData{})))
		return
	}
	// Fill gaps from the slot under discussion ("ja, passt").
	if c.in.Offer != nil {
		if r.Service == "" {
			r.Service = c.in.Offer.Service
		}
		if r.Start.IsZero() && !c.in.Offer.Start.IsZero() && !r.HasDate && !r.HasTime {
			r.Start, r.HasDate, r.HasTime = c.in.Offer.Start, true, true
		}
	}
	c.in.Offer = &Offer{Service: r.Service, Start: r.Start}
	if r.Service == "" || r.Start.IsZero() {
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(u.Question), c.text(tenants.TemplateMissingDetails, tenants.MessageData{})))
		return
	}
	var q string
	if err := c.read(ctx, "validate-"+ev.EventID, "Check catalogue and opening hours", act.ValidateIntent,
		activities.ValidateInput{Tenant: c.in.Tenant, Result: r, ReceivedAt: ev.ReceivedAt}).Get(ctx, &q); err != nil || q != "" {
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(q), c.text(tenants.TemplateSlotNotPossible, tenants.MessageData{})))
		return
	}
	c.book(ctx, ev, r.Service, r.Start)
}

// reply reserves the answer in the outbox. It retries until the reserve
// lands (an outbox that is down for a while delays the answer, it does not
// swallow it); a reply still not reserved then is logged for operators.
func (c *conversation) reply(ctx workflow.Context, ev InboundEvent, text string) {
	var step activities.Step
	err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, workflows.Tuning{}.WithDefaults(), "reply-"+ev.EventID, "Reply to the customer"), act.SendReply, activities.ReplyInput{
		Tenant: c.in.Tenant, ConversationID: c.id, Customer: c.in.Customer, Channel: workflows.ReplyChannel(ev.Channel), EventID: ev.EventID, Text: text,
	}).Get(ctx, &step)
	if err != nil {
		workflow.GetLogger(ctx).Error("reply not reserved", "event", ev.EventID, "error", err)
	}
}

// publishReview shows the conversation as NeedsReview in the Web UI while
// a potential duplicate waits for a person, so "all of a customer's
// conversations waiting for review" finds it (by CustomerKey).
func (c *conversation) publishReview(ctx workflow.Context) {
	status := workflows.BookingStatusKey.ValueUnset()
	if len(c.in.Pending) > 0 {
		status = workflows.BookingStatusKey.ValueSet(string(workflows.StatusNeedsReview))
	}
	updates := append([]temporal.SearchAttributeUpdate{status}, workflows.CustomerUpserts(ctx, c.versions, c.in.Customer, c.in.CustomerKey)...)
	if err := c.versions.Upsert(ctx, updates...); err != nil {
		// Only the Web UI's filter is affected; the review itself is in the
		// review queue.
		workflow.GetLogger(ctx).Warn("review status not published", "error", err)
	}
}

// text renders a reply in the conversation's terms.
func (c *conversation) text(name tenants.TemplateName, data tenants.MessageData) string {
	return c.in.Terms.Render(name, data)
}

// slot is the message data naming a service and its slot.
func (c *conversation) slot(service string, start time.Time) tenants.MessageData {
	return tenants.MessageData{Service: c.in.Terms.Label(service), When: tenants.When(start, c.timezone(), c.in.Terms.Lang())}
}

// timezone is the tenant's time zone as the terms name it, else the
// input's (runs recorded before terms).
func (c *conversation) timezone() string {
	if c.in.Terms != nil && c.in.Terms.Timezone != "" {
		return c.in.Terms.Timezone
	}
	return c.in.Timezone
}

// deposit is the service's deposit as the terms name it, decided where
// the service is known; else the input's (runs recorded before terms).
func (c *conversation) deposit(service string) (int64, string) {
	if c.in.Terms != nil {
		if s, ok := c.in.Terms.Services[service]; ok {
			return s.DepositAmount, s.Currency
		}
	}
	return c.in.DepositAmount, c.in.Currency
}
