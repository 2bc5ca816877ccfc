package workflows_test

// Issue #27 defect 1: a cancelled booking is over for dedup. The same
// wish after "Ich muss absagen" books again, under a workflow ID of its
// own, instead of "Ihr Termin … ist bereits in Bearbeitung" and nothing.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestConversationRebooksAfterCancel: book by WhatsApp, cancel ("Ich muss
// absagen", free: the slot is ≥72 h ahead), then the same wish again: a
// second reservation in the calendar, confirmed, and a second
// confirmation at Twilio; nothing answers "bereits in Bearbeitung".
func TestConversationRebooksAfterCancel(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	s.worker(t)
	fake := fakeTwilio(t, s)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	wish := "Reifenwechsel " + slotText(t, 11)
	s.say(t, in, "SMbook", wish)
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool {
		return messagesTo(fake, customer, "") == 2 // the reply and the confirmation
	})
	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the cancellation message", func() bool { return messagesTo(fake, customer, "storniert") == 1 })
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")

	s.say(t, in, "SMrebook", wish)
	testsupport.Eventually(t, 60*time.Second, "the rebooking confirmed in the calendar", func() bool {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer) == 1
	})
	testsupport.Eventually(t, 60*time.Second, "the second confirmation at Twilio", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation' AND recipient = $1 AND state IN ('sent', 'delivered')`, customer) == 2
	})
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "two bookings over time")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'cancelled'`, customer))
	require.Equal(t, 2, s.count(t, `SELECT count(DISTINCT reference) FROM calendar_reservations WHERE customer = $1`, customer),
		"the rebooking has a workflow ID (business reference) of its own")
	require.Zero(t, messagesTo(fake, customer, "bereits in Bearbeitung"))
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
}

// TestConversationAfterAMoveFollowsTheNewSlot: book Tuesday 11, move it to
// Thursday 10, then ask for both: Thursday 10 merges into the moved
// booking (nothing new in the calendar), Tuesday 11 is a new wish and is
// booked again, with a workflow ID of its own.
func TestConversationAfterAMoveFollowsTheNewSlot(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	s.worker(t)
	fake := fakeTwilio(t, s)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	tuesday, thursday := testsupport.Slot(t, time.Tuesday, 11), testsupport.Slot(t, time.Thursday, 10)
	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 11))
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(fake, customer, "") == 2 })
	s.say(t, in, "SMmove", fmt.Sprintf("Bitte verschieben auf den %d.%d. um 10 Uhr", thursday.Day(), int(thursday.Month())))
	testsupport.Eventually(t, 60*time.Second, "the message about the move", func() bool { return messagesTo(fake, customer, "") == 3 })
	confirmedAt := func(slot time.Time) int {
		return s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed' AND lower(slot) = $2`, customer, slot.UTC())
	}
	require.Equal(t, 1, confirmedAt(thursday), "moved to Thursday")

	s.say(t, in, "SMnew", fmt.Sprintf("Reifenwechsel am %d.%d. um 10 Uhr", thursday.Day(), int(thursday.Month())))
	testsupport.Eventually(t, 60*time.Second, "the answer to the wish for the new slot", func() bool { return messagesTo(fake, customer, "") == 4 })
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "the wish for the new slot merged")

	s.say(t, in, "SMold", "Reifenwechsel "+slotText(t, 11))
	testsupport.Eventually(t, 60*time.Second, "the old slot booked again", func() bool { return confirmedAt(tuesday) == 1 })
	testsupport.Eventually(t, 60*time.Second, "its reply and confirmation", func() bool { return messagesTo(fake, customer, "") == 6 })
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 1, confirmedAt(thursday), "the moved booking stands")
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer))
	require.Equal(t, 2, s.count(t, `SELECT count(DISTINCT reference) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer))
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
}
