package workflows_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestRecordHistoriesHandOver records the move of a conversation from its
// legacy ID (versioned: conversation-legacy-handover): the legacy run that
// named the service and handed over, the keyed run that took its state
// over and started the appointment the "Ja" confirmed (recorded open), and
// that appointment with the customer-key search attributes (versioned:
// customer-key-attributes). Runs with `make histories`.
func TestRecordHistoriesHandOver(t *testing.T) {
	s, ctx := recording(t)
	customer := "+4915112340030"
	in := recordConversation(customer)
	legacy := conversation.LegacyWorkflowID("demo", customer)
	signalStart(t, ctx, s, legacy, in, "REChand1", "Ich brauche einen Reifenwechsel")
	testsupport.Eventually(t, 30*time.Second, "the legacy conversation's question", func() bool {
		return s.count(t, `SELECT count(*) FROM outbox_messages WHERE kind = 'reply:REChand1'`) == 1
	})

	in.CustomerKey = testsupport.CustomerKey(t, "demo", customer)
	keyed := conversation.WorkflowID("demo", in.CustomerKey)
	slot := testsupport.Slot(t, time.Tuesday, 14).In(berlin(t))
	signalStart(t, ctx, s, keyed, in, "REChand2", fmt.Sprintf("Ja, %d.%d. 14 Uhr passt", slot.Day(), int(slot.Month())))
	var appointment string
	testsupport.Eventually(t, 60*time.Second, "the appointment the keyed conversation started", func() bool {
		ids := s.appointmentsOf(ctx, string(in.CustomerKey))
		if len(ids) != 1 {
			return false
		}
		appointment = ids[0]
		return true
	})
	s.save(t, ctx, appointment, "keyed.appointment.json")
	s.save(t, ctx, legacy, "handover-legacy.conversation.json")
	d, err := s.tc.DescribeWorkflowExecution(ctx, legacy, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.GetWorkflowExecutionInfo().GetStatus())
	writeHistory(t, fetchHistory(t, ctx, s.tc, keyed, ""), "handover-keyed.conversation.json")
}

// recordConversation is the demo tenant's conversation input the
// recordings start conversations with (no customer key: a legacy one).
func recordConversation(customer string) conversation.Input {
	return conversation.Input{Tenant: "demo", Customer: customer, DepositAmount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin"}
}

// recording is the stack and context of one conversation recording; it
// skips unless histories are being recorded.
func recording(t *testing.T) (recordStack, context.Context) {
	t.Helper()
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return newRecordStack(t, nil), ctx
}

// keyedWish starts customer's conversation as today's gateway does, under
// its key, with the wish for a tire change at hour on the next weekday
// wd; it returns the conversation's input, workflow ID and the slot.
func keyedWish(t *testing.T, ctx context.Context, s recordStack, customer, eventID string, wd time.Weekday, hour int) (conversation.Input, string, time.Time) {
	t.Helper()
	in := recordConversation(customer)
	in.CustomerKey = testsupport.CustomerKey(t, "demo", customer)
	id := conversation.WorkflowID("demo", in.CustomerKey)
	slot := testsupport.Slot(t, wd, hour).In(berlin(t))
	signalStart(t, ctx, s, id, in, eventID, fmt.Sprintf("Reifenwechsel am %d.%d. um %d:00 Uhr", slot.Day(), int(slot.Month()), hour))
	return in, id, slot
}

// signalStart delivers one inbound event as the gateway does.
func signalStart(t *testing.T, ctx context.Context, s recordStack, id string, in conversation.Input, eventID, text string) {
	t.Helper()
	_, err := s.tc.SignalWithStartWorkflow(ctx, id, conversation.SignalInbound,
		conversation.InboundEvent{EventID: eventID, Channel: workflows.ChannelWhatsApp, Text: text, ReceivedAt: time.Now().UTC()},
		client.StartWorkflowOptions{ID: id, TaskQueue: s.queue}, conversation.WorkflowName, in)
	require.NoError(t, err)
}

// appointmentsOf lists the appointment workflows of a customer key (none
// while the list is not yet written or cannot be read).
func (s recordStack) appointmentsOf(ctx context.Context, key string) []string {
	resp, err := s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf(`CustomerKey = %q AND WorkflowType = "AppointmentWorkflow"`, key)})
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range resp.GetExecutions() {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	return ids
}

func (s recordStack) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	return loc
}
