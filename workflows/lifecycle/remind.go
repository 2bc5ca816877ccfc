package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// Reminders: one message per booking and offset before the slot, through
// the outbox (kind MessageKindReminder + offset, so a retried send is the
// same row), never after a cancellation, never in the tenant's quiet
// hours, and only when the slot is far enough ahead: a reminder due less
// than workflows.MinReminderLead after the confirmation is not sent at all (the
// confirmation has just said the same), which also keeps short runs such
// as the chaos drill free of reminders.

// MessageKindReminder prefixes the outbox kind of a reminder, e.g.
// "reminder_24h0m0s".
const MessageKindReminder = "reminder_"

// earlyReminder: a reminder at least this long before the slot says how
// to cancel or move (TemplateReminderEarly).
const earlyReminder = 24 * time.Hour

// defaultReminders are the offsets of a tenant that sets none.
func defaultReminders() []time.Duration { return []time.Duration{24 * time.Hour, 2 * time.Hour} }

// reminder is one planned reminder: its offset and when it is sent.
type reminder struct {
	offset time.Duration
	at     time.Time
	// move is the number of moves before it was planned: a reminder of a
	// moved booking is another message (kind and key) than the same
	// offset's reminder of the slot before.
	move int
}

// kind is the reminder's outbox kind and the suffix of its activity ID.
func (r reminder) kind() string {
	k := r.offset.String()
	if r.move > 0 {
		k += "_move_" + strconv.Itoa(r.move)
	}
	return k
}

// plan lists the reminders due after start+ReminderLead and before
// the slot, moved out of quiet hours, in the order they are sent.
func (b *booking) plan(start time.Time) []reminder {
	offsets := b.in.Reminders
	if len(offsets) == 0 {
		offsets = defaultReminders()
	}
	var out []reminder
	for _, off := range offsets {
		if off <= 0 {
			continue
		}
		at := b.outOfQuietHours(b.in.SlotStart.Add(-off))
		if at.Before(start.Add(b.tuning.ReminderLead)) || !at.Before(b.in.SlotStart) {
			continue
		}
		out = append(out, reminder{offset: off, at: at, move: len(b.state.Moves)})
	}
	slices.SortStableFunc(out, func(x, y reminder) int { return x.at.Compare(y.at) })
	return out
}

// remind sends one reminder, unless the booking is no longer Confirmed
// or a cancellation is under way. While it sends, a cancel waits, so a
// reminder never follows the cancellation message.
func (b *booking) remind(ctx workflow.Context, r reminder) {
	if b.moving {
		if b.waitForMove(ctx) != nil || r.move != len(b.state.Moves) {
			return // the move planned this offset again for the new slot
		}
	}
	if b.state.Status != workflows.StatusConfirmed || b.cancelling || b.moving {
		return
	}
	b.reminding = true
	defer func() { b.reminding = false }()
	id := "send-reminder-" + r.kind()
	name := tenants.TemplateReminder
	if r.offset >= earlyReminder {
		name = tenants.TemplateReminderEarly
	}
	data := tenants.MessageData{
		Service: b.in.Terms.Label(b.in.Service), When: tenants.When(b.in.SlotStart, b.in.Timezone, b.in.Terms.Lang()), Booking: b.in.BookingID,
	}
	step, err := workflows.SendMessage(ctx, b.tuning, id, fmt.Sprintf("Send the reminder %s before", r.offset), activities.ConfirmationInput{
		Tenant: b.in.Tenant, Reference: b.in.Reference, Channel: workflows.ReplyChannel(b.in.Channel), Customer: b.in.Customer,
		Kind: MessageKindReminder + r.kind(), SendBy: b.in.SlotStart,
	}.Compose(b.in.Terms, name, data))
	b.record(ctx, "send reminder "+r.offset.String()+" before", id, step, err)
	if err == nil {
		b.state.Reminders = append(b.state.Reminders, r.kind())
	}
}

// versionRemindAfterMove: a reminder that comes due while a move is being
// carried out (the move has already planned it for the new slot) waits
// for the move to finish instead of being dropped. Only a negative
// REMINDER_LEAD makes a reminder due that soon after a move.
const versionRemindAfterMove = "booking-remind-after-move"

// waitForMove waits until the move under way is done, for runs from
// versionRemindAfterMove on; older runs dropped the reminder (an error
// here means: drop it).
func (b *booking) waitForMove(ctx workflow.Context) error {
	if b.versions.GetVersion(ctx, versionRemindAfterMove, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return errReminderDropped
	}
	return workflow.Await(ctx, func() bool { return !b.moving })
}

// errReminderDropped: a reminder due during a move in a run from before
// versionRemindAfterMove.
var errReminderDropped = errors.New("reminder due during a move: dropped")

// runReplannable is run for bookings that can move: it waits for the next
// reminder or the slot's end on a timer that a move interrupts, and then
// waits for the plan the move left (reminders for the new time, the new
// slot's end). A reminder whose time for the new slot has passed, or
// falls within workflows.MinReminderLead of the move (whose message states the new
// time), is not sent.
func (b *booking) runReplannable(ctx workflow.Context) (State, error) {
	b.planned = b.plan(workflow.Now(ctx))
	for {
		b.replanned = false
		at := b.slotEnd()
		if len(b.planned) > 0 {
			at = b.planned[0].at
		}
		if err := b.waitUntil(ctx, at); err != nil {
			return b.state, err
		}
		if b.replanned {
			continue
		}
		if len(b.planned) > 0 {
			r := b.planned[0]
			b.planned = b.planned[1:]
			b.remind(ctx, r)
			continue
		}
		// A cancel or a move accepted before the end finishes first; a
		// move then waits for its new slot.
		if err := workflow.Await(ctx, func() bool { return !b.cancelling && !b.moving }); err != nil {
			return b.state, err
		}
		if !b.replanned {
			return b.complete(ctx)
		}
	}
}

// waitUntil waits on a durable timer until t in workflow time, or until a
// move replans; then the timer is cancelled, so the Web UI shows no timer
// of a slot the booking no longer has.
func (b *booking) waitUntil(ctx workflow.Context, t time.Time) error {
	d := t.Sub(workflow.Now(ctx))
	if d <= 0 {
		return nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	until := t.UTC().Format(time.RFC3339)
	timer := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: "until " + until})
	if err := workflow.Await(ctx, func() bool { return timer.IsReady() || b.replanned }); err != nil {
		return fmt.Errorf("wait until %s: %w", until, err)
	}
	if timer.IsReady() {
		if err := timer.Get(ctx, nil); err != nil {
			return fmt.Errorf("wait until %s: %w", until, err)
		}
	}
	return nil
}

// outOfQuietHours moves t out of the tenant's quiet hours (local time):
// to their end if that is still before the slot, else to just before
// their start, the evening before.
func (b *booking) outOfQuietHours(t time.Time) time.Time {
	if b.in.Terms == nil {
		return t
	}
	opens, ok1 := minuteOfDay(b.in.Terms.QuietOpens)
	closes, ok2 := minuteOfDay(b.in.Terms.QuietCloses)
	if !ok1 || !ok2 || opens == closes {
		return t
	}
	loc, err := time.LoadLocation(b.in.Timezone)
	if err != nil {
		loc = time.UTC
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	quiet := m >= opens && m < closes
	if opens > closes { // wraps midnight
		quiet = m >= opens || m < closes
	}
	if !quiet {
		return t
	}
	at := func(minute, days int) time.Time {
		return time.Date(lt.Year(), lt.Month(), lt.Day()+days, minute/60, minute%60, 0, 0, loc)
	}
	end := at(closes, 0)
	if !end.After(lt) {
		end = at(closes, 1)
	}
	if end.Before(b.in.SlotStart) {
		return end
	}
	begin := at(opens, 0)
	if begin.After(lt) {
		begin = at(opens, -1)
	}
	return begin.Add(-time.Minute)
}

// minuteOfDay reads "HH:MM".
func minuteOfDay(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}
