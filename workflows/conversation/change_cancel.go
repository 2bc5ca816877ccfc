package conversation

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// bookingGroups sorts the customer's bookings by what a change can do
// with them.
type bookingGroups struct {
	// inFlight: the appointment has not ended; confirmed: its lifecycle
	// is Confirmed; cancelled: its lifecycle is Cancelled or Cancelling;
	// unknown: a state a change cannot read (no workflow, no lifecycle,
	// NeedsReview); withdrawn: the appointment ended Cancelled before it
	// confirmed (the customer's cancel of the unconfirmed booking).
	inFlight, confirmed, cancelled, unknown, withdrawn []activities.Appointment
}

// groupBookings sorts found, keeping those that match what the message
// names (the service; with matchDay, the day).
func groupBookings(found []activities.Appointment, r intent.Result, matchDay bool) bookingGroups {
	var g bookingGroups
	for _, ap := range found {
		if r.Service != "" && ap.Service != r.Service {
			continue
		}
		if matchDay && r.HasDate && !sameDay(ap.Current(), r.Day) {
			continue
		}
		switch {
		case !ap.Found:
			g.unknown = append(g.unknown, ap)
		case ap.Lifecycle != "":
			// Committed: the lifecycle (started at the appointment's very
			// end, while it may still run) takes the changes.
			g.byLifecycle(ap)
		case ap.Running && ap.Status == string(workflows.StatusConfirmed):
			// Booked, its lifecycle not started yet: neither the
			// appointment (past its last step) nor the lifecycle takes a
			// change this instant. A cancel or a move waits for the
			// lifecycle (awaitLifecycles); past that bound a person looks
			// rather than the wish being lost.
			g.unknown = append(g.unknown, ap)
		case ap.Running:
			g.inFlight = append(g.inFlight, ap)
		case ap.Status == string(workflows.StatusCancelled):
			g.withdrawn = append(g.withdrawn, ap)
		case ap.Status != string(workflows.StatusConfirmed):
			if ap.Status != string(workflows.StatusRejected) && ap.Status != string(workflows.StatusPaymentFailed) {
				g.unknown = append(g.unknown, ap) // closed in another state (e.g. NeedsReview)
			}
		default:
			g.unknown = append(g.unknown, ap) // Confirmed, but no lifecycle found
		}
	}
	return g
}

// byLifecycle sorts a booking by its lifecycle's status.
func (g *bookingGroups) byLifecycle(ap activities.Appointment) {
	switch ap.Lifecycle {
	case string(workflows.StatusConfirmed):
		g.confirmed = append(g.confirmed, ap)
	case string(workflows.StatusCancelled), string(workflows.StatusCancelling):
		g.cancelled = append(g.cancelled, ap)
	case string(workflows.StatusCompleted), string(workflows.StatusNoShow):
		// Over: nothing to change.
	default:
		g.unknown = append(g.unknown, ap)
	}
}

// sameDay reports whether t falls on the calendar day that starts at day
// (in day's location).
func sameDay(t, day time.Time) bool {
	ty, tm, td := t.In(day.Location()).Date()
	dy, dm, dd := day.Date()
	return ty == dy && tm == dm && td == dd
}

// cancelBooking handles a cancellation wish: the one booking it means is
// cancelled (in flight: by signal; confirmed: by the booking's cancel
// Update, after asking when the deposit would be kept); several: the
// customer is asked which; none: a person looks.
func (c *conversation) cancelBooking(ctx workflow.Context, ev InboundEvent, r intent.Result) {
	c.in.Offer = nil
	var found []activities.Appointment
	if !c.findBookings(ctx, ev, &found) || !c.awaitLifecycles(ctx, ev, findID(ev), &found) {
		return
	}
	c.cancelFound(ctx, ev, r, found, false)
}

// cancelFound cancels the one booking among found that the wish means;
// again is set when the bookings were read a second time because the
// appointment in flight closed before the cancel signal reached it.
func (c *conversation) cancelFound(ctx workflow.Context, ev InboundEvent, r intent.Result, found []activities.Appointment, again bool) {
	g := groupBookings(found, r, true)
	active := append(append([]activities.Appointment{}, g.inFlight...), g.confirmed...)
	switch {
	case len(active) > 1:
		c.reply(ctx, ev, c.text(tenants.TemplateCancelWhich, tenants.MessageData{Alternatives: c.slotList(active)}))
	case len(active) == 1 && len(g.unknown) > 0:
		c.cancelReview(ctx, ev, cancelSeveral, append(active, g.unknown...), "", c.text(tenants.TemplateCancelSeveral, tenants.MessageData{}))
	case len(g.inFlight) == 1:
		c.cancelSignalled(ctx, ev, r, g.inFlight[0], again)
	case len(g.confirmed) == 1:
		c.cancelAsk(ctx, ev, g.confirmed[0])
	case len(g.cancelled) > 0:
		c.alreadyCancelled(ctx, ev, g.cancelled)
	case len(g.unknown) > 0:
		c.cancelReview(ctx, ev, cancelUnknown, g.unknown, "", c.text(tenants.TemplateCancelUnknown, tenants.MessageData{}))
	case len(g.withdrawn) > 0 && c.versions.GetVersion(ctx, versionCancelledUnconfirmedIsAnswered, workflow.DefaultVersion, 1) >= 1:
		c.alreadyCancelled(ctx, ev, g.withdrawn)
	default:
		if ch, ok := c.justCancelled(ctx, r); ok && c.versions.GetVersion(ctx, versionCancelAgainAfterItEnded, workflow.DefaultVersion, 1) >= 1 {
			c.reply(ctx, ev, c.text(tenants.TemplateCancelAlready, c.slot(ch.Service, ch.Slot)))
			return
		}
		c.cancelReview(ctx, ev, cancelNone, nil, "", c.text(tenants.TemplateCancelNone, tenants.MessageData{}))
	}
}

// versionCancelAgainAfterItEnded: a cancel wish that finds no booking
// right after this conversation cancelled one in flight (the same wish on
// a second channel, once the appointment ended Cancelled and its intent
// was closed, so nothing is found any more) is answered that the booking
// is cancelled. Before, it was "we found no open booking, a member of
// staff will check" with a case for nobody (the 100-booking drill's only
// task for a person, twice on 6 December).
const versionCancelAgainAfterItEnded = "cancel-again-after-it-ended"

// justCancelled is the cancel of a booking in flight this conversation
// made within echoWindow that the wish r may mean (its service, if it
// names one).
func (c *conversation) justCancelled(ctx workflow.Context, r intent.Result) (RecentChange, bool) {
	now := workflow.Now(ctx)
	for i := len(c.in.Changed) - 1; i >= 0; i-- {
		ch := c.in.Changed[i]
		if ch.Kind == ChangeCancel && ch.Service != "" && now.Sub(ch.At) <= echoWindow && (r.Service == "" || r.Service == ch.Service) {
			return ch, true
		}
	}
	return RecentChange{}, false
}

// alreadyCancelled answers a wish for bookings cancelled before: silence
// when this conversation cancelled one moments ago (the same wish on
// another channel: the customer has the cancellation message), else the
// news that it is cancelled.
func (c *conversation) alreadyCancelled(ctx workflow.Context, ev InboundEvent, cancelled []activities.Appointment) {
	for _, ap := range cancelled {
		if c.echo(ctx, ChangeCancel, ap.WorkflowID, time.Time{}) {
			workflow.GetLogger(ctx).Info("cancel wish again for a booking just cancelled: not answered twice", "event", ev.EventID, "appointment", ap.WorkflowID)
			return
		}
	}
	ap := cancelled[0]
	if ap.Lifecycle == string(workflows.StatusCancelling) && c.versions.GetVersion(ctx, versionCancellingIsUnderWay, workflow.DefaultVersion, 1) >= 1 {
		// Not cancelled yet (a refund may wait for the payment API):
		// "already cancelled" would be false, and a customer who then asks
		// for the slot again would be merged into the booking still ending.
		c.reply(ctx, ev, c.text(tenants.TemplateChangePending, c.slot(ap.Service, ap.Current())))
		return
	}
	c.reply(ctx, ev, c.text(tenants.TemplateCancelAlready, c.slot(ap.Service, ap.Current())))
}

// versionCancelledUnconfirmedIsAnswered: a cancel wish that finds only
// bookings cancelled before they were confirmed (the same wish sent on
// two channels at once: a call and a WhatsApp message) is answered that
// the booking is cancelled. Before, it was answered "we found no open
// booking, a member of staff will check" and opened a case for nobody
// (the 100-booking drill's only task for a person, once).
const versionCancelledUnconfirmedIsAnswered = "cancelled-unconfirmed-is-answered"

// versionCancellingIsUnderWay: a cancel wish for a booking whose cancel
// is still being carried out is answered "under way", no longer "already
// cancelled" (the chaos drill: a rebook sent on that answer was merged
// into the booking still being cancelled).
const versionCancellingIsUnderWay = "cancelling-is-under-way"

// cancelAsk cancels a confirmed booking, or first asks the customer to
// confirm when the tenant's window has passed and the deposit would be
// kept: they are told before, not after. The conversation's view of the
// window may differ from the booking's (a policy changed since, a cancel
// at the boundary), so a cancel it believes free is sent on the condition
// that it refunds; the booking refuses it otherwise, and then the
// customer is asked.
func (c *conversation) cancelAsk(ctx workflow.Context, ev InboundEvent, ap activities.Appointment) {
	amount, _ := c.deposit(ap.Service)
	window := lifecycle.DefaultCancellationWindow
	if c.in.Terms != nil && c.in.Terms.CancellationWindow > 0 {
		window = c.in.Terms.CancellationWindow
	}
	if amount <= 0 || !workflow.Now(ctx).After(ap.Current().Add(-window)) {
		c.cancelConfirmed(ctx, ev, ap, true)
		return
	}
	c.askKeepDeposit(ctx, ev, ap)
}

// askKeepDeposit tells the customer the deposit would be kept and waits
// for their "Ja" (followUp).
func (c *conversation) askKeepDeposit(ctx workflow.Context, ev InboundEvent, ap activities.Appointment) {
	amount, currency := c.deposit(ap.Service)
	c.in.Awaiting = &AwaitedChange{Kind: ChangeCancel, AppointmentID: ap.WorkflowID, Service: ap.Service, AskedAt: workflow.Now(ctx)}
	data := c.slot(ap.Service, ap.Current())
	data.Amount = tenants.Money{Amount: amount, Currency: currency}.Format(c.in.Terms.Lang())
	c.reply(ctx, ev, c.text(tenants.TemplateCancelConfirmKept, data))
}

// cancelConfirmed sends the booking its cancel Update (onlyIfRefunded:
// on the condition that it refunds). The booking sends the cancellation
// message; the conversation answers only a refusal or a failure.
func (c *conversation) cancelConfirmed(ctx workflow.Context, ev InboundEvent, ap activities.Appointment, onlyIfRefunded bool) {
	slot := c.slot(ap.Service, ap.Current())
	st, err := c.changeBooking(ctx, ev, ap, ChangeCancel, lifecycle.CancelRequest{Reason: "asked by the customer (" + string(ev.Channel) + ")", OnlyIfRefunded: onlyIfRefunded})
	switch {
	case workflows.ErrorType(err) == lifecycle.ErrTypeDepositWouldBeKept:
		c.askKeepDeposit(ctx, ev, ap)
	case err == nil && st.Status == workflows.StatusNeedsReview:
		c.reply(ctx, ev, c.text(tenants.TemplateCancelConfirmed, slot))
	case err == nil:
	case workflows.ErrorType(err) == activities.ErrTypeChangePending:
		// Under way (a refund retried through an outage): the booking
		// sends its message when done.
	case workflows.ErrorType(err) == lifecycle.ErrTypeNotCancellable:
		c.reply(ctx, ev, c.text(tenants.TemplateCancelNotPossible, slot))
	default:
		c.cancelReview(ctx, ev, cancelEndedMeanwhile, []activities.Appointment{ap}, err.Error(), c.text(tenants.TemplateCancelEndedMeanwhile, slot))
	}
}
