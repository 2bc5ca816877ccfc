package channels_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestLegacyConversationHandsOverItsState: a conversation started before
// customer keys, under customer:<tenant>:<E.164>, holds the service the
// customer asked for. After the upgrade the gateway signals the keyed ID
// only; the keyed conversation takes the legacy state over, so "Ja, <date>
// 14 Uhr passt" books that service exactly once. The legacy run completes;
// an event it had seen is still ignored by the keyed one.
func TestLegacyConversationHandsOverItsState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	customer := newCustomer()
	legacy := conversation.LegacyWorkflowID("demo", customer)

	// Before the upgrade: the old gateway started the conversation under
	// the number, with CustomerPhone, and the customer named only the service.
	e.signalLegacy(t, customer, "", "SMbefore", "Ich brauche einen Reifenwechsel")
	testsupport.Eventually(t, 30*time.Second, "the legacy conversation to ask for the time", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMbefore' AND reference = $1`, legacy) == 1
	})

	// After the upgrade: the confirmation names date and time, not the service.
	day := nextTuesday(t)
	status, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMafter", customer, "Ja, "+dateText(day)+" 14 Uhr passt"))
	require.NoError(t, err)
	require.Equal(t, 200, status)
	e.requireBookings(t, 1)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND service = 'tire-change'`, customer),
		"the service asked for before the upgrade is booked")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM booking_intents`))

	keyed := testsupport.ConversationID(t, "demo", customer)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMafter' AND reference = $1`, keyed))
	testsupport.Eventually(t, 30*time.Second, "the legacy conversation to complete", func() bool {
		d, err := e.tc.DescribeWorkflowExecution(ctx, legacy, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})

	// The seen event IDs came along: a redelivery of the legacy run's
	// event straight to the keyed conversation is ignored. The event after
	// it is answered, so the redelivery has been handled by then.
	for _, ev := range []conversation.InboundEvent{
		{EventID: "SMbefore", Channel: workflows.ChannelWhatsApp, Text: "Ich brauche einen Reifenwechsel", ReceivedAt: time.Now().UTC()},
		{EventID: "SMthanks", Channel: workflows.ChannelWhatsApp, Text: "Danke", ReceivedAt: time.Now().UTC()},
	} {
		require.NoError(t, e.tc.SignalWorkflow(ctx, keyed, "", conversation.SignalInbound, ev))
	}
	testsupport.Eventually(t, 30*time.Second, "the answer to the event after the redelivery", func() bool {
		return e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMthanks'`) == 1
	})
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:SMbefore'`), "the seen event is not handled again")
	e.requireBookings(t, 1)
}

// signalLegacy delivers an event as the gateway did before customer keys:
// to customer:demo:<E.164>, started if needed, with key in its input (a
// run from before keys has none).
func (e env) signalLegacy(t *testing.T, customer string, key customerid.Key, eventID, text string) {
	t.Helper()
	legacy := conversation.LegacyWorkflowID("demo", customer)
	_, err := e.tc.SignalWithStartWorkflow(context.Background(), legacy, conversation.SignalInbound, conversation.InboundEvent{
		EventID: eventID, Channel: workflows.ChannelWhatsApp, Text: text, ReceivedAt: time.Now().UTC(),
	}, client.StartWorkflowOptions{ID: legacy, TaskQueue: e.gw.TaskQueue}, conversation.WorkflowName,
		conversation.Input{Tenant: "demo", Customer: customer, CustomerKey: key, PaymentMethod: e.gw.PaymentMethod, Timezone: "Europe/Berlin"})
	require.NoError(t, err)
}

// TestLegacyConversationsPendingReviewMovesWithIt: a potential duplicate
// opened by the legacy conversation waits for a person across the
// upgrade. The keyed conversation takes the pending wish over, the case
// now names it (and the Web UI shows it NeedsReview by its key), and the
// reviewer's "separate" books the second wish once.
func TestLegacyConversationsPendingReviewMovesWithIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	day, customer := nextTuesday(t), newCustomer()
	legacy, keyed := conversation.LegacyWorkflowID("demo", customer), testsupport.ConversationID(t, "demo", customer)
	// The legacy run gets the key, which runs from before keys lack, so
	// that today's code books its wishes (keyless, it hands them to a
	// person: TestConversationWithoutKeyHandsTheWishToAPerson).
	key := testsupport.CustomerKey(t, "demo", customer)
	e.signalLegacy(t, customer, key, "SMa", "Reifenwechsel am "+dateText(day)+" um 14 Uhr")
	e.signalLegacy(t, customer, key, "SMb", "Inspektion am "+dateText(day)+" um 14 Uhr")
	var caseID string
	testsupport.Eventually(t, 30*time.Second, "a review case of the legacy conversation", func() bool {
		return e.pool.QueryRow(ctx, `SELECT id FROM review_cases WHERE status = 'open' AND workflow_id = $1`, legacy).Scan(&caseID) == nil
	})
	e.requireBookings(t, 1)

	_, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp("SMc", customer, "Danke"))
	require.NoError(t, err)
	testsupport.Eventually(t, 30*time.Second, "the case to name the keyed conversation", func() bool {
		return e.count(t, `SELECT count(*) FROM review_cases WHERE id = $1 AND workflow_id = $2`, caseID, keyed) == 1
	})
	// The legacy run, which has the key here, may still show it too.
	q := `CustomerKey = "` + string(key) + `" AND BookingStatus = "NeedsReview" AND WorkflowId != "` + legacy + `"`
	testsupport.Eventually(t, 20*time.Second, "the keyed conversation shown waiting for review", func() bool {
		resp, err := e.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		return err == nil && len(resp.GetExecutions()) == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == keyed
	})

	e.resolveCase(t, caseID, "separate")
	e.requireBookings(t, 2)
	require.Equal(t, 2, e.count(t, `SELECT count(*) FROM booking_intents`))
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND service = 'inspection'`, customer))
}
