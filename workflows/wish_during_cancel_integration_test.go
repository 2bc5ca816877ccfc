package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// The texts a customer must and must not get for a wish that meets a
// booking being cancelled.
const (
	toldInProgress     = "bereits in Bearbeitung"
	toldBeingCancelled = "wird gerade storniert"
)

// TestWishWhileTheBookingIsCancelledIsToldSoAndBooksAfter: a confirmed
// booking is cancelled through the API and waits for its refund (held at
// a proxy); the customer asks for the same appointment again meanwhile.
// Before, the wish merged into the ending booking: "ist bereits in
// Bearbeitung", then the cancel completed and nothing stood. Now the
// customer is told the booking is being cancelled, and the same wish
// after the cancellation books anew: one confirmed reservation at the
// slot in the end.
func TestWishWhileTheBookingIsCancelledIsToldSoAndBooksAfter(t *testing.T) {
	s := newConvStack(t)
	h := cancelWithRefundHeld(t, &s)
	fake, customer := h.fake, h.customer
	s.say(t, h.in, "SMagain", h.wish)
	testsupport.Eventually(t, 60*time.Second, "the answer to the wish", func() bool { return messagesTo(fake, customer, toldBeingCancelled) == 1 })
	require.Zero(t, messagesTo(fake, customer, toldInProgress), "the booking the wish met is ending")

	h.refund.Release()
	require.NoError(t, <-h.cancelled)
	testsupport.Eventually(t, 60*time.Second, "the cancellation message", func() bool { return messagesTo(fake, customer, "ist storniert.") == 1 })
	s.awaitOver(t, h.appointment)
	s.say(t, h.in, "SMrebook", h.wish)
	testsupport.Eventually(t, 60*time.Second, "the new booking confirmed", func() bool { return messagesTo(fake, customer, "bestätigt:") == 2 })
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'cancelled'`, customer))
	require.Zero(t, messagesTo(fake, customer, toldInProgress))
}

// TestWishWhileAnUnpaidBookingIsCancelledIsToldSo: the customer books,
// and before paying the link writes "Ich muss absagen"; the appointment
// releases its hold (held at a proxy) while the customer asks for the
// same appointment again. Tried on make run before the fix, four times of
// four: "ist bereits in Bearbeitung", no new link, nothing booked. Now the
// customer is told the booking is being cancelled, and the same wish after
// that gets a new link and a new hold.
func TestWishWhileAnUnpaidBookingIsCancelledIsToldSo(t *testing.T) {
	s := newConvStack(t)
	proxy := testsupport.NewProxy(t, s.cfg.CalendarURL)
	s.cfg.CalendarURL = proxy.URL
	release := proxy.PauseAt("POST", "/v1/holds/", false) // link mode confirms nothing before payment
	t.Cleanup(release.Release)
	s.worker(t)
	fake := fakeTwilio(t, s)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	in.PaymentMethod = "" // the deposit is paid by link
	wish := "Reifenwechsel " + slotText(t, 16)
	s.say(t, in, "SMbook", wish)
	testsupport.Eventually(t, 60*time.Second, "the payment link at Twilio", func() bool { return messagesTo(fake, customer, "Anzahlung") == 1 })

	s.say(t, in, "SMcancel", "Ich muss absagen")
	select {
	case <-release.Reached():
	case <-time.After(time.Minute):
		t.Fatal("the hold's release never reached the calendar")
	}
	s.say(t, in, "SMagain", wish)
	testsupport.Eventually(t, 60*time.Second, "the answer to the wish", func() bool { return messagesTo(fake, customer, toldBeingCancelled) == 1 })
	require.Zero(t, messagesTo(fake, customer, toldInProgress), "the booking the wish met is ending")

	release.Release()
	var appointment string
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`SELECT reference FROM calendar_reservations WHERE customer = $1`, customer).Scan(&appointment))
	s.awaitOver(t, appointment)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'released'`, customer))
	s.say(t, in, "SMrebook", wish)
	testsupport.Eventually(t, 60*time.Second, "a new payment link", func() bool { return messagesTo(fake, customer, "Anzahlung") == 2 })
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'held'`, customer))
	require.Zero(t, messagesTo(fake, customer, toldInProgress))
}

// awaitOver waits until the booking of the appointment is over as dedup
// reads it: the same wish then is a new booking.
func (s convStack) awaitOver(t *testing.T, appointment string) {
	t.Helper()
	testsupport.Eventually(t, 60*time.Second, appointment+" over", func() bool {
		target, err := workflows.BookingTarget(context.Background(), s.tc, appointment)
		return err == nil && target.Over
	})
}

// awaitLifecycle waits until the booking's lifecycle runs: the
// appointment sends its confirmation a moment before it starts it, and a
// cancel through the API goes to the lifecycle.
func (s convStack) awaitLifecycle(t *testing.T, appointment string) {
	t.Helper()
	// Published Confirmed, not only started: a cancel that lands in the
	// lifecycle's first workflow task races its setup, which publishes
	// Confirmed (issue #48 notes), and these tests are about what comes
	// after.
	testsupport.Eventually(t, 60*time.Second, "the lifecycle of "+appointment, func() bool {
		st, _, err := workflows.PublishedStatus(context.Background(), s.tc, lifecycle.WorkflowID(appointment))
		return err == nil && st == workflows.StatusConfirmed
	})
}
