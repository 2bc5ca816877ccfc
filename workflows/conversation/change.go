package conversation

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// Changes of a confirmed booking asked for in the conversation ("Ich muss
// absagen", "Können wir auf Donnerstag 10 Uhr verschieben?").
//
// The conversation finds the customer's bookings (FindAppointments: the
// dedup intents plus each booking lifecycle's status and current slot)
// and sends the one meant the booking's own Update through the activity
// ChangeBooking. The Update ID derives from the inbound event, so a
// redelivered event or a retried activity reaches the same Update and the
// booking acts once. The booking tells the customer (one cancellation
// message, one message per move); the conversation replies only when no
// change was made (a question, alternatives, a refusal).
//
// The same wish by voice and WhatsApp reaches this one workflow as two
// events, handled one after the other. The second finds the booking
// already changed as asked; the conversation remembers the changes it made
// for a while (RecentChange) and stays silent for such an echo, so the
// customer gets one message, not two.

// versionBookingChanges: a cancel of a confirmed booking and a reschedule
// are carried out through the booking's Updates, instead of a review case
// (cancel) or a question (reschedule).
const versionBookingChanges = "conversation-booking-changes"

// Windows of the conversation's memory of changes.
const (
	// awaitWindow: how long a question about a change (late cancel: "Ja"
	// to confirm; a move: the new time) stays open.
	awaitWindow = 30 * time.Minute
	// echoWindow: how long the same change asked again (on another
	// channel, in other words) is taken for an echo and not answered.
	echoWindow       = 15 * time.Minute
	maxRecentChanges = 10
)

// changesOn reports whether this run carries out changes through the
// booking's Updates (GetVersion; runs recorded before replay the old way).
func (c *conversation) changesOn(ctx workflow.Context) bool {
	return c.versions.GetVersion(ctx, versionBookingChanges, workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

// followUp reads a message in the light of an open question about a
// change. It returns true when it handled the message (a confirmed late
// cancel); it may turn r into a reschedule (the new time after "to which
// time?"). Any other answer drops the question.
func (c *conversation) followUp(ctx workflow.Context, ev InboundEvent, r *intent.Result) bool {
	aw := c.in.Awaiting
	if aw == nil {
		return false
	}
	c.in.Awaiting = nil
	if workflow.Now(ctx).Sub(aw.AskedAt) > awaitWindow {
		return false
	}
	switch aw.Kind {
	case ChangeCancel:
		if r.Kind == intent.KindConfirm && r.Start.IsZero() {
			var found []activities.Appointment
			if !c.findBookings(ctx, ev, &found) {
				return true
			}
			for _, ap := range found {
				if ap.WorkflowID == aw.AppointmentID {
					c.cancelConfirmed(ctx, ev, ap, false) // the customer said yes to keeping the deposit
					return true
				}
			}
			c.reply(ctx, ev, c.text(tenants.TemplateCancelAlready, tenants.MessageData{}))
			return true
		}
	case ChangeReschedule:
		moving := r.Kind == intent.KindBook || r.Kind == intent.KindConfirm || r.Kind == intent.KindReschedule
		if moving && !r.Start.IsZero() && (r.Service == "" || aw.Service == "" || r.Service == aw.Service) {
			r.Kind = intent.KindReschedule
			if r.Service == "" {
				r.Service = aw.Service
			}
		}
	}
	return false
}

// findBookings runs FindAppointments, asking until the database answers;
// on failure it opens the review case a lookup failure always opened and
// reports false.
func (c *conversation) findBookings(ctx workflow.Context, ev InboundEvent, found *[]activities.Appointment) bool {
	return c.findBookingsAs(ctx, ev, findID(ev), found)
}

// versionWishMeansEarlierBookings: a change wish looks only at bookings
// that existed when it was received, or that the conversation's own
// earlier wishes started. Before, the late second copy of a cancel sent
// on two channels cancelled the booking an agent had made meanwhile (the
// chaos drill, 1000 bookings, seed 2026: one rebook lost).
const versionWishMeansEarlierBookings = "wish-means-earlier-bookings"

// findID is the activity ID of the first read of the customer's bookings
// for ev.
func findID(ev InboundEvent) string { return "find-appointments-" + ev.EventID }

// findBookingsAs is findBookings under the activity ID id.
func (c *conversation) findBookingsAs(ctx workflow.Context, ev InboundEvent, id string, found *[]activities.Appointment) bool {
	in := activities.FindAppointmentsInput{Tenant: c.in.Tenant, Customer: c.in.Customer}
	if c.versions.GetVersion(ctx, versionWishMeansEarlierBookings, workflow.DefaultVersion, 1) >= 1 {
		in.WishReceivedAt = ev.ReceivedAt
	}
	err := workflow.ExecuteActivity(c.untilAnswered(ctx, id, "Find the customer's bookings"), act.FindAppointments, in).Get(ctx, found)
	if err != nil {
		c.cancelReview(ctx, ev, cancelLookupFailed, nil, err.Error(), c.text(tenants.TemplateCancelLookupFailed, tenants.MessageData{}))
		return false
	}
	return true
}

// changeBooking sends the booking's Update under an ID derived from the
// inbound event and decodes its answer.
func (c *conversation) changeBooking(ctx workflow.Context, ev InboundEvent, ap activities.Appointment, kind ChangeKind, args any) (lifecycle.State, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return lifecycle.State{}, err
	}
	key := "event:" + ev.EventID
	updateID := lifecycle.CancelUpdateID(c.in.Tenant, key)
	if kind == ChangeReschedule {
		updateID = lifecycle.RescheduleUpdateID(c.in.Tenant, key)
	}
	var answer json.RawMessage
	err = workflow.ExecuteActivity(c.opts(ctx, string(kind)+"-booking-"+ev.EventID, "Ask the booking: "+string(kind)), act.ChangeBooking,
		activities.ChangeBookingInput{Tenant: c.in.Tenant, AppointmentID: ap.WorkflowID, Update: updateName(kind), UpdateID: updateID, Args: raw}).Get(ctx, &answer)
	if err != nil {
		return lifecycle.State{}, err
	}
	var st lifecycle.State
	if err := json.Unmarshal(answer, &st); err != nil {
		return lifecycle.State{}, err
	}
	c.remember(ctx, RecentChange{Kind: kind, AppointmentID: ap.WorkflowID, Slot: st.SlotStart})
	return st, nil
}

func updateName(kind ChangeKind) string {
	if kind == ChangeReschedule {
		return lifecycle.UpdateReschedule
	}
	return lifecycle.UpdateCancel
}

// remember records a change carried out, keeping the last few.
func (c *conversation) remember(ctx workflow.Context, ch RecentChange) {
	ch.At = workflow.Now(ctx)
	c.in.Changed = append(c.in.Changed, ch)
	if len(c.in.Changed) > maxRecentChanges {
		c.in.Changed = c.in.Changed[len(c.in.Changed)-maxRecentChanges:]
	}
}

// echo reports whether this conversation made the change kind to the
// appointment (to slot, for a move) within echoWindow.
func (c *conversation) echo(ctx workflow.Context, kind ChangeKind, appointmentID string, slot time.Time) bool {
	now := workflow.Now(ctx)
	for _, ch := range c.in.Changed {
		if ch.Kind == kind && ch.AppointmentID == appointmentID && now.Sub(ch.At) <= echoWindow &&
			(slot.IsZero() || ch.Slot.Equal(slot)) {
			return true
		}
	}
	return false
}

// slotList names bookings for a question ("Reifenwechsel am Di., 1.12., 14:00").
func (c *conversation) slotList(aps []activities.Appointment) []string {
	out := make([]string, 0, len(aps))
	for _, ap := range aps {
		d := c.slot(ap.Service, ap.Current())
		out = append(out, d.Service+", "+d.When)
	}
	return out
}
