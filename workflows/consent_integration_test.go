package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/consent"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestStopHoldsBackRemindersUntilStart: a customer writes STOP, then
// STOPP, then books; later START. At the fake Twilio: one
// acknowledgement of the opt-out (not two), the confirmation of the
// booking (it answers what the customer asked for), no reminder (the
// relay records it as suppressed), and the acknowledgement of START.
// The shop's trail keeps every keyword with its message and time.
func TestStopHoldsBackRemindersUntilStart(t *testing.T) {
	t.Parallel()
	s := newConvStack(t)
	// As in the drill: a reminder two years before the slot, already due
	// when the booking is confirmed, and a lead that plans it anyway.
	_, err := s.pool.Exec(context.Background(), `UPDATE tenants SET policies = policies || '{"reminders": ["17520h"]}' WHERE id = 'demo'`)
	require.NoError(t, err)
	s.cfg.ReminderLead = -87600 * time.Hour
	fake := fakeTwilio(t, s)
	s.worker(t)
	customer := conversationCustomer()
	in := conversationInput(customer, 0)
	id := conversation.LegacyWorkflowID("demo", customer)

	s.say(t, in, "SMstop1", "STOP")
	testsupport.Eventually(t, 30*time.Second, "the acknowledgement", func() bool { return messagesTo(fake, customer, "keine Erinnerungen mehr") == 1 })
	s.say(t, in, "SMstop2", "Stopp!")
	s.idle(t, id, "")
	require.Equal(t, 1, messagesTo(fake, customer, "keine Erinnerungen mehr"), "one acknowledgement, not one per STOP")

	s.say(t, in, "SMbook", "Reifenwechsel "+slotText(t, 11))
	testsupport.Eventually(t, 60*time.Second, "the confirmation", func() bool { return messagesTo(fake, customer, "bestätigt") == 1 })
	testsupport.Eventually(t, 60*time.Second, "the reminder held back", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient LIKE '%' || $1 AND kind LIKE 'reminder_%' AND state = 'suppressed'`, customer) == 1
	})
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM outbox_messages WHERE recipient LIKE '%' || $1 AND kind LIKE 'reminder_%'`, customer))
	require.Zero(t, messagesTo(fake, customer, "Erinnerung:")+messagesTo(fake, customer, "Erinnerung an Ihren Termin"), "no reminder reached the customer")

	s.say(t, in, "SMstart", "start")
	testsupport.Eventually(t, 30*time.Second, "the acknowledgement of START", func() bool { return messagesTo(fake, customer, "wieder Erinnerungen") == 1 })
	s.idle(t, id, "")

	var trail []consent.Change
	trail, err = stack.ConsentStore(s.cfg, s.pool).Trail(context.Background(), "demo", customer)
	require.NoError(t, err)
	var events []string
	for _, c := range trail {
		events = append(events, c.EventID+" "+string(c.Action))
	}
	require.Equal(t, []string{"SMstop1 opt_out", "SMstop2 opt_out", "SMstart opt_in"}, events)
	require.Zero(t, s.count(t, `SELECT count(*) FROM review_cases`))
}
