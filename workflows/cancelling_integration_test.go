package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// TestCancelWishWhileTheCancelIsUnderWayIsNotToldCancelled: a booking
// cancelled through the API waits for its refund (the payment API's
// answer held at a proxy); the customer writes "Ich muss absagen"
// meanwhile. The answer says the wish is being carried out, not "ist
// bereits storniert": nothing is cancelled yet, and a customer who took
// that for done and booked the slot again was merged into the ending
// booking. Once the refund lands, one cancellation message follows.
func TestCancelWishWhileTheCancelIsUnderWayIsNotToldCancelled(t *testing.T) {
	s := newConvStack(t)
	proxy := testsupport.NewProxy(t, s.cfg.PaymentsURL)
	s.cfg.PaymentsURL = proxy.URL
	refund := proxy.PauseAt("POST", "/v1/refunds", false)
	s.worker(t)
	fake := fakeTwilio(t, s)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 15))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool {
		return messagesTo(fake, customer, "") == 2 // the reply and the confirmation
	})
	var appointment string
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`SELECT reference FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer).Scan(&appointment))

	cancelled := make(chan error, 1)
	go func() {
		_, err := workflows.CancelAppointment(context.Background(), s.tc, appointment, workflows.CancelUpdateID("demo", "api-1"), "customer called")
		cancelled <- err
	}()
	testsupport.AwaitPause(t, refund, cancelled)
	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the answer to the cancel wish", func() bool { return messagesTo(fake, customer, "") == 3 })
	require.Zero(t, messagesTo(fake, customer, "bereits storniert"), "nothing is cancelled yet")
	require.Equal(t, 1, messagesTo(fake, customer, "wird gerade ausgeführt"))

	refund.Release()
	require.NoError(t, <-cancelled)
	testsupport.Eventually(t, 60*time.Second, "the cancellation message", func() bool { return messagesTo(fake, customer, "ist storniert.") == 1 })
	s.idle(t, workflows.LegacyConversationWorkflowID("demo", customer), "")
	require.Equal(t, 4, messagesTo(fake, customer, ""), "reply, confirmation, answer, cancellation: nothing twice")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM refunds`))
}
