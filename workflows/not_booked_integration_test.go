package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestDeclinedWishIsToldNotBooked: a WhatsApp customer whose card is
// declined was told "die Bestätigung folgt" and then heard nothing. Now
// the ending is told, once: nothing booked, nothing charged. Counted at
// the fake Twilio, with the calendar and the payments checked.
func TestDeclinedWishIsToldNotBooked(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	s.worker(t)
	fake := fakeTwilio(t, s)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	in.PaymentMethod = "pm_card_chargeDeclined"
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 9))
	testsupport.Eventually(t, 60*time.Second, "the ending at Twilio", func() bool { return messagesTo(fake, customer, "nicht buchen") == 1 })
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 2, messagesTo(fake, customer, ""), "the reply to the wish and the ending, nothing twice")
	require.Zero(t, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status IN ('held', 'confirmed')`, customer))
	require.Zero(t, s.count(t, `SELECT count(*) FROM payment_intents WHERE status IN ('requires_capture', 'succeeded')`))
}
