package conversation

import (
	"cmp"
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// rescheduleWish handles "verschieben auf Donnerstag 10 Uhr": the one
// confirmed booking it means is moved by the booking's reschedule Update.
// Without a new time, several candidates or a taken slot, the customer is
// asked, and the next message naming a time is read as the move.
func (c *conversation) rescheduleWish(ctx workflow.Context, ev InboundEvent, r intent.Result) {
	c.in.Offer = nil
	now := workflow.Now(ctx)
	if r.Start.IsZero() {
		c.in.Awaiting = &AwaitedChange{Kind: ChangeReschedule, Service: r.Service, AskedAt: now}
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(r.Question), c.text(tenants.TemplateUnclear, tenants.MessageData{})))
		return
	}
	var found []activities.Appointment
	if !c.findBookings(ctx, ev, &found) || !c.awaitMoveable(ctx, ev, findID(ev), &found) {
		return
	}
	g := groupBookings(found, r, false)
	switch {
	case len(g.confirmed) == 1 && len(g.inFlight) == 0:
		c.move(ctx, ev, g.confirmed[0], r)
	case len(g.confirmed)+len(g.inFlight) > 1:
		c.in.Awaiting = &AwaitedChange{Kind: ChangeReschedule, AskedAt: now}
		c.reply(ctx, ev, c.text(tenants.TemplateRescheduleWhich, tenants.MessageData{Alternatives: c.slotList(append(g.confirmed, g.inFlight...))}))
	case len(g.inFlight) == 1:
		ap := g.inFlight[0]
		c.reply(ctx, ev, c.text(tenants.TemplateRescheduleInFlight, c.slot(ap.Service, ap.SlotStart)))
	default:
		c.reply(ctx, ev, c.text(tenants.TemplateRescheduleNone, tenants.MessageData{}))
	}
}

// move asks the booking to move to r.Start, after the same catalogue and
// opening-hours check a new booking gets. The booking sends the message
// about the move; the conversation answers the rest.
func (c *conversation) move(ctx workflow.Context, ev InboundEvent, ap activities.Appointment, r intent.Result) {
	wanted := c.slot(ap.Service, r.Start)
	if ap.Current().Equal(r.Start) {
		if !c.echo(ctx, ChangeReschedule, ap.WorkflowID, r.Start.UTC()) {
			c.reply(ctx, ev, c.text(tenants.TemplateRescheduleSame, wanted))
		}
		return
	}
	r.Service = ap.Service
	r.Kind = intent.KindBook // checked as the booking of the new slot would be
	var q string
	if err := c.read(ctx, "validate-"+ev.EventID, "Check catalogue and opening hours", act.ValidateIntent,
		activities.ValidateInput{Tenant: c.in.Tenant, Result: r, ReceivedAt: ev.ReceivedAt}).Get(ctx, &q); err != nil || q != "" {
		c.in.Awaiting = &AwaitedChange{Kind: ChangeReschedule, AppointmentID: ap.WorkflowID, Service: ap.Service, AskedAt: workflow.Now(ctx)}
		c.reply(ctx, ev, cmp.Or(c.in.Terms.Question(q), c.text(tenants.TemplateSlotNotPossible, tenants.MessageData{})))
		return
	}
	st, err := c.changeBooking(ctx, ev, ap, ChangeReschedule, lifecycle.RescheduleRequest{Start: r.Start.UTC()})
	switch {
	case err == nil && st.Status == workflows.StatusNeedsReview:
		// The new slot is booked, the old one could not be cancelled: the
		// booking sent no message, a person settles it.
		c.reply(ctx, ev, c.text(tenants.TemplateChangeReview, c.slot(ap.Service, ap.Current())))
	case err == nil:
	case workflows.ErrorType(err) == activities.ErrTypeSlotUnavailable:
		c.in.Awaiting = &AwaitedChange{Kind: ChangeReschedule, AppointmentID: ap.WorkflowID, Service: ap.Service, AskedAt: workflow.Now(ctx)}
		wanted.Alternatives = c.alternativesOf(err)
		c.reply(ctx, ev, c.text(tenants.TemplateAlternatives, wanted))
	case workflows.ErrorType(err) == activities.ErrTypeChangePending:
		c.reply(ctx, ev, c.text(tenants.TemplateChangePending, c.slot(ap.Service, ap.Current())))
	case workflows.ErrorType(err) == lifecycle.ErrTypeNotReschedulable:
		c.reply(ctx, ev, c.text(tenants.TemplateRescheduleNotPossible, c.slot(ap.Service, ap.Current())))
	default:
		c.changeReview(ctx, ev, ap, r.Start, err)
	}
}

// alternativesOf formats the free slots a refused move offers.
func (c *conversation) alternativesOf(err error) []string {
	var appErr *temporal.ApplicationError
	var refused lifecycle.RescheduleRefused
	if !errors.As(err, &appErr) || !appErr.HasDetails() {
		return nil
	}
	var raw json.RawMessage
	if appErr.Details(&raw) != nil || json.Unmarshal(raw, &refused) != nil {
		return nil // the question then asks for another time without a list
	}
	out := make([]string, 0, len(refused.Alternatives))
	for _, t := range refused.Alternatives {
		out = append(out, tenants.When(t, c.timezone(), c.in.Terms.Lang()))
	}
	return out
}

// changeReview opens a change_request case when the booking could not be
// asked, and tells the customer a person will.
func (c *conversation) changeReview(ctx workflow.Context, ev InboundEvent, ap activities.Appointment, to time.Time, cause error) {
	details := map[string]any{"event_id": ev.EventID, "channel": string(ev.Channel), "appointment": ap, "to": to.UTC(), "error": cause.Error()}
	var opened activities.Step
	err := workflow.ExecuteActivity(c.opts(ctx, "open-change-review-"+ev.EventID, "Open review case: change request"), act.OpenReviewCase,
		activities.ReviewInput{Tenant: c.in.Tenant, WorkflowID: c.id, Reason: review.ReasonChangeRequest, Details: details}).Get(ctx, &opened)
	if err != nil {
		workflow.GetLogger(ctx).Error("change request: review case not opened", "event_id", ev.EventID, "error", err)
		c.reply(ctx, ev, c.text(tenants.TemplateChangeNotRecorded, tenants.MessageData{}))
		return
	}
	c.reply(ctx, ev, c.text(tenants.TemplateChangeReview, c.slot(ap.Service, ap.Current())))
}
