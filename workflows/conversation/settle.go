package conversation

import (
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// A cancel or move wish can meet a booking in the moment between its confirmation
// and its lifecycle: the appointment has confirmed and starts the
// lifecycle as its last step, so for a moment neither takes a cancel (the
// appointment is past its last cancellable step, the lifecycle does not
// exist yet or has not published its status), or the appointment closes
// just before the conversation's cancel signal reaches it. The customer
// has a booking that takes changes within seconds; a person is not
// needed (nor is "you have no confirmed booking" true), so the
// conversation waits for the lifecycle and sends it the change.

// versionChangeAwaitsLifecycle: a cancel or move wish that meets a
// booking between its confirmation and its lifecycle waits for the
// lifecycle and goes to it. Before, a cancel opened a case for a person
// ("unknown external workflow execution", twice in the 1000-booking
// drill; under load the 100-booking drill's only person tasks) and a move
// was told there was no confirmed booking.
const versionChangeAwaitsLifecycle = "change-awaits-lifecycle"

// How long a change waits for a confirmed booking's lifecycle, and
// how often it looks: the lifecycle starts within seconds of the
// confirmation; past the bound a person looks, as before.
const (
	settleBound       = 2 * time.Minute
	settleFirstPause  = time.Second
	settleLongestWait = 15 * time.Second
)

// versionMoveAwaitsConfirming: a move wish that meets a booking still
// confirming (the deposit taken, the calendar confirming, the confirmation
// perhaps already sent) waits for its lifecycle as a confirmed one does.
// Before, the customer who had just read "Ihr Termin ist bestätigt" was
// told the booking was not confirmed yet and to write again.
const versionMoveAwaitsConfirming = "move-awaits-confirming"

// settling reports whether ap is confirmed while its lifecycle is not
// found yet (not started, or its status not yet published).
func settling(ap activities.Appointment) bool {
	return ap.Found && ap.Status == string(workflows.StatusConfirmed) && ap.Lifecycle == ""
}

// confirming reports whether ap is at its last steps: confirming the
// hold, capturing, sending the confirmation. The status it publishes
// reads Confirmed only once those are done.
func confirming(ap activities.Appointment) bool {
	return ap.Found && ap.Running && ap.Status == string(workflows.StatusConfirming) && ap.Lifecycle == ""
}

// settlingOrConfirming is what a move waits out: it cannot be carried out
// before the lifecycle exists, and the answer "not confirmed yet" would be
// false a moment later.
func settlingOrConfirming(ap activities.Appointment) bool {
	return settling(ap) || confirming(ap)
}

// awaitMoveable is awaitLifecycles for a move wish: it waits for a
// booking still confirming too (versionMoveAwaitsConfirming).
func (c *conversation) awaitMoveable(ctx workflow.Context, ev InboundEvent, id string, found *[]activities.Appointment) bool {
	pending := settling
	if slices.ContainsFunc(*found, confirming) &&
		c.versions.GetVersion(ctx, versionMoveAwaitsConfirming, workflow.DefaultVersion, 1) >= 1 {
		pending = settlingOrConfirming
	}
	return c.awaitWhile(ctx, ev, id, found, pending)
}

// awaitLifecycles reads the customer's bookings again, with growing
// pauses up to settleBound, while one of them is settling. The reads run
// as activities under id-1, id-2, … (id: the read they follow). It reports false when
// a read failed (findBookings then opened a case and told the customer).
func (c *conversation) awaitLifecycles(ctx workflow.Context, ev InboundEvent, id string, found *[]activities.Appointment) bool {
	return c.awaitWhile(ctx, ev, id, found, settling)
}

// awaitWhile is awaitLifecycles waiting while one booking is pending.
func (c *conversation) awaitWhile(ctx workflow.Context, ev InboundEvent, id string, found *[]activities.Appointment, pending func(activities.Appointment) bool) bool {
	if !slices.ContainsFunc(*found, pending) || c.versions.GetVersion(ctx, versionChangeAwaitsLifecycle, workflow.DefaultVersion, 1) < 1 {
		return true
	}
	deadline := workflow.Now(ctx).Add(settleBound)
	pause, round := settleFirstPause, 0
	for slices.ContainsFunc(*found, pending) && workflow.Now(ctx).Before(deadline) {
		if err := workflow.Sleep(ctx, pause); err != nil {
			// Cancelled: what was found goes on as it is (to a person).
			workflow.GetLogger(ctx).Warn("change wish: waiting for the lifecycle cut short", "event", ev.EventID, "error", err)
			return true
		}
		pause = min(2*pause, settleLongestWait)
		round++
		if !c.findBookingsAs(ctx, ev, id+"-"+strconv.Itoa(round), found) {
			return false
		}
	}
	return true
}

// cancelSignalled sends the appointment in flight the cancel signal. If
// the appointment closed before the signal reached it (confirmed and
// handed to its lifecycle a moment ago, or ended without a booking), the
// bookings are read again, once, and the wish goes where it now belongs.
func (c *conversation) cancelSignalled(ctx workflow.Context, ev InboundEvent, r intent.Result, ap activities.Appointment, again bool) {
	slot := c.slot(ap.Service, ap.SlotStart)
	err := workflow.SignalExternalWorkflow(ctx, ap.WorkflowID, "", workflows.SignalCancel, nil).Get(ctx, nil)
	if err == nil {
		c.remember(ctx, RecentChange{Kind: ChangeCancel, AppointmentID: ap.WorkflowID, Slot: ap.Current(), Service: ap.Service})
		c.reply(ctx, ev, c.text(tenants.TemplateCancelInFlight, slot))
		return
	}
	if again || c.versions.GetVersion(ctx, versionChangeAwaitsLifecycle, workflow.DefaultVersion, 1) < 1 {
		c.cancelReview(ctx, ev, cancelEndedMeanwhile, []activities.Appointment{ap}, err.Error(), c.text(tenants.TemplateCancelEndedMeanwhile, slot))
		return
	}
	workflow.GetLogger(ctx).Info("cancel wish: the appointment closed before the signal; reading the bookings again",
		"event", ev.EventID, "appointment", ap.WorkflowID, "error", err)
	var found []activities.Appointment
	id := findID(ev) + "-closed"
	if !c.findBookingsAs(ctx, ev, id, &found) || !c.awaitLifecycles(ctx, ev, id, &found) {
		return
	}
	c.cancelFound(ctx, ev, r, found, true)
}
