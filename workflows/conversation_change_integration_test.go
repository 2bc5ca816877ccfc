package workflows_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// moveThenCancel books by WhatsApp, moves the booking ("Bitte verschieben
// auf … um 10 Uhr"), then cancels it ("Ich muss absagen"), as a customer
// does, on the real stack; it returns the conversation's workflow ID.
func moveThenCancel(t *testing.T, s convStack, customer string) string {
	t.Helper()
	fake := fakeTwilio(t, s)
	in := conversationInput(customer, 0)
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 11))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool {
		return messagesTo(fake, customer, "") == 2 // the reply and the confirmation
	})
	thursday := testsupport.Slot(t, time.Thursday, 10)
	s.say(t, in, "SMmove", fmt.Sprintf("Bitte verschieben auf den %d.%d. um 10 Uhr", thursday.Day(), int(thursday.Month())))
	testsupport.Eventually(t, 60*time.Second, "the message about the move", func() bool { return messagesTo(fake, customer, "") == 3 })
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed' AND lower(slot) = $2`, customer, thursday.UTC()),
		"the booking is on Thursday at 10")
	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the cancellation message", func() bool { return messagesTo(fake, customer, "") == 4 })
	id := conversation.LegacyWorkflowID("demo", customer)
	s.idle(t, id, "")
	require.Zero(t, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status IN ('held', 'confirmed')`, customer), "nothing left booked")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'cancelled'`, customer),
		"the first slot, cancelled by the move; the second, cancelled by the customer")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded'`), "one charge")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM refunds`), "one refund")
	require.Equal(t, 1, messagesTo(fake, customer, "storniert"))
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
	return id
}

// TestConversationMovesThenCancelsTheBookingOnce: booked, moved once,
// cancelled once, the deposit charged once and refunded once; after the
// reply to the booking wish, three messages: confirmation, move,
// cancellation.
func TestConversationMovesThenCancelsTheBookingOnce(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	s.worker(t)
	moveThenCancel(t, s, conversationCustomer())
}

// TestRecordHistoriesConversationChanges records the conversation of
// moveThenCancel (versioned: conversation-booking-changes), open, as it
// waits for the customer's next message. Runs with `make histories`.
func TestRecordHistoriesConversationChanges(t *testing.T) {
	t.Parallel()
	recordMoveThenCancel(t, "conversation-changes.conversation.json")
}

// TestRecordHistoriesChangesOutlastOutage records moveThenCancel again
// once the wishes' lookups ask until answered (versioned:
// changes-outlast-outage). Runs with `make histories`.
func TestRecordHistoriesChangesOutlastOutage(t *testing.T) {
	t.Parallel()
	recordMoveThenCancel(t, "conversation-changes-outlast.conversation.json")
}

// TestRecordHistoriesWishOutlastsOutage records moveThenCancel once the
// booking wish's dedup decision asks until answered (versioned:
// wish-outlasts-outage). Runs with `make histories`.
func TestRecordHistoriesWishOutlastsOutage(t *testing.T) {
	t.Parallel()
	recordMoveThenCancel(t, "conversation-wish-outlast.conversation.json")
}

func recordMoveThenCancel(t *testing.T, file string) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newConvStack(t)
	s.worker(t)
	id := moveThenCancel(t, s, conversationCustomer())
	writeHistory(t, fetchHistory(t, context.Background(), s.tc, id, ""), file)
}
