package channels_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// TestReviewersSeparateBooksAnOverlappingSecondCar: a customer books a
// tire change at 14:00 and, minutes later, another at 14:15 the same day
// (the second car). The calendar refuses an overlapping second reservation
// of one customer for one service unless it is deliberate; the reviewer's
// "separate" must travel to the hold as that mark, so the second car is
// booked (on the other bay) and not answered "already booked".
func TestReviewersSeparateBooksAnOverlappingSecondCar(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	day, customer := nextTuesday(t), newCustomer()
	_, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), customer, "Reifenwechsel am "+dateText(day)+" um 14 Uhr"))
	require.NoError(t, err)
	testsupport.Eventually(t, 60*time.Second, "the first booking confirmed", func() bool {
		return e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == 1
	})
	_, _, err = e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), customer, "Reifenwechsel am "+dateText(day)+" um 14:15 Uhr"))
	require.NoError(t, err)
	var caseID string
	testsupport.Eventually(t, 30*time.Second, "a review case", func() bool {
		return e.pool.QueryRow(ctx, `SELECT id FROM review_cases WHERE reason = 'potential_duplicate' AND status = 'open'`).Scan(&caseID) == nil
	})
	e.resolveCase(t, caseID, "separate")

	testsupport.Eventually(t, 60*time.Second, "the second car booked", func() bool {
		return e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`) == 2 &&
			e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation'`) == 2
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed' AND deliberate_second`))
	require.Equal(t, 2, e.count(t, `SELECT count(DISTINCT resource_id) FROM calendar_reservations WHERE status = 'confirmed'`))
	require.Zero(t, e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'already_booked'`))
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded' AND amount_captured > 0`))
}
