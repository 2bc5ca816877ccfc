package agent_test

// Attacks on the agent tools by another tenant (docs/security.md).

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestAnotherTenantsReferenceLeadsNowhere: the demo tenant owns a
// confirmed booking in its own calendar whose reference names London's
// confirmed appointment (planted before the calendar refused such
// references, so written here straight into the row). get_booking and
// cancel_booking with that booking ID, with demo's token, answer "no
// booking": London's booking stays confirmed, nothing is refunded, its
// customer is told nothing. Before, the cancel Update went to London's
// booking and its customer got a cancellation.
func TestAnotherTenantsReferenceLeadsNowhere(t *testing.T) {
	t.Parallel()
	e := newTwoTenantEnv(t)
	ctx := context.Background()
	victim := newCustomer()
	london := e.connect(t, testsupport.LondonToken)
	booked := book(t, london, map[string]any{
		"customer": victim, "service": "mot", "start": testsupport.Slot(t, time.Tuesday, 11).Format(time.RFC3339),
	}, agent.StatusConfirmed)
	testsupport.Eventually(t, 30*time.Second, "London's booking has its lifecycle", func() bool {
		now, err := workflows.BookingStatusOf(ctx, e.tc, booked.WorkflowID)
		return err == nil && now.Status == workflows.StatusConfirmed
	})

	desk := calendar.NewClient(e.cfg.CalendarURL, devToken)
	h, err := desk.CreateHold(ctx, "plant-"+victim, calendar.HoldRequest{
		ResourceID: "bay-1", Service: "tire-change", Start: testsupport.Slot(t, time.Wednesday, 15), Customer: newCustomer(), Reference: "desk-" + victim,
	})
	require.NoError(t, err)
	planted, err := desk.ConfirmHold(ctx, "plant-confirm-"+victim, h.ID)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `UPDATE calendar_reservations SET reference = $1 WHERE id = $2`, booked.WorkflowID, h.ID)
	require.NoError(t, err)

	attacker := e.connect(t, devToken)
	var got agent.BookingAnswer
	require.Contains(t, call(t, attacker, agent.ToolGetBooking, map[string]any{"id": planted.ID}, &got), "no booking with this id")
	var changed agent.ChangeOutput
	msg := call(t, attacker, agent.ToolCancelBooking, map[string]any{"id": planted.ID, "reason": "attack"}, &changed)
	if msg == "" {
		require.Equal(t, agent.StatusNotChanged, changed.Status, changed.Message)
	}

	now, err := workflows.BookingStatusOf(ctx, e.tc, booked.WorkflowID)
	require.NoError(t, err)
	require.Equal(t, workflows.StatusConfirmed, now.Status, "London's booking is untouched")
	require.Zero(t, e.count(t, `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, booked.WorkflowID))
	require.Zero(t, e.count(t, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = $2`, booked.WorkflowID, lifecycle.MessageKindCancellation))
}
