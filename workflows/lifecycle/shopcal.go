package lifecycle

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

// The booking in the shop's own calendar (package shopcal,
// docs/calendars.md). bookonce's calendar stays the system of record; the
// shop's calendar follows it: each change (the booking, a cancel, a move)
// queues the calendar bookings it touched, and one coroutine carries them
// over in that order, each by an activity that reads the booking and puts
// or removes the one event of this booking. A queue, not a call per
// change: a move's removal of the old event must come before the new one
// is written, and a cancel after a move must come after both.

// versionShopCalendar: bookings are carried into the shop's calendar.
const versionShopCalendar = "shop-calendar"

// shopCalendar is the queue of calendar bookings whose event is to follow
// them, and how many were carried (it names their activities).
type shopCalendar struct {
	on     bool
	queue  []string
	synced int
}

// startShopCalendar queues the booking and starts carrying it over.
func (b *booking) startShopCalendar(ctx workflow.Context) {
	if b.versions.GetVersion(ctx, versionShopCalendar, workflow.DefaultVersion, 1) < 1 {
		return
	}
	b.shopCal.on = true
	b.followInShopCalendar(b.in.BookingID)
	workflow.Go(ctx, b.carryToShopCalendar)
}

// followInShopCalendar queues calendar bookings whose event is to follow
// them.
func (b *booking) followInShopCalendar(bookingIDs ...string) {
	if b.shopCal.on {
		b.shopCal.queue = append(b.shopCal.queue, bookingIDs...)
	}
}

// shopCalendarDone reports whether every change reached the shop's
// calendar (or a case for a person): the workflow ends only then.
func (b *booking) shopCalendarDone() bool { return len(b.shopCal.queue) == 0 }

// carryToShopCalendar carries the queued bookings over, one at a time,
// each retried until the shop's calendar answers (the outage of a shop's
// server delays it; CompensationTimeout bounds it). What cannot be
// carried opens a case: staff would otherwise not see the booking, or see
// one that no longer exists, with nobody told.
func (b *booking) carryToShopCalendar(ctx workflow.Context) {
	for {
		if err := workflow.Await(ctx, func() bool { return len(b.shopCal.queue) > 0 }); err != nil {
			return
		}
		bookingID := b.shopCal.queue[0]
		b.shopCal.synced++
		id := fmt.Sprintf("shop-calendar-%d", b.shopCal.synced)
		var written bool
		err := workflow.ExecuteActivity(workflows.CompensationCtx(ctx, b.tuning, id, "Shop calendar: "+bookingID), act.SyncShopCalendar,
			activities.ShopCalendarInput{Tenant: b.in.Tenant, Reference: b.in.Reference, BookingID: bookingID}).Get(ctx, &written)
		if err != nil {
			details := map[string]any{"booking_id": bookingID, "error": err.Error()}
			if _, cerr := workflows.OpenCaseWith(ctx, b.tuning, b.in.Tenant, id, review.ReasonShopCalendar, details); cerr != nil {
				workflow.GetLogger(ctx).Error("open shop calendar case", "booking", bookingID, "error", cerr)
			}
		}
		b.shopCal.queue = b.shopCal.queue[1:]
	}
}
