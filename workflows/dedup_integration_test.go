package workflows_test

// A wish is merged only into an appointment still under way: a closed
// intent, or an appointment that ended without a booking, is a new attempt
// (failure-matrix item 18).

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/dedup"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
)

// TestMatrix18ClosedIntentIsNotMergedInto: an appointment ends without a
// booking (card declined) while the database refuses to close its intent
// for longer than the step retry budget. The close is retried until it
// lands, so the same wish later is decided "new" and booked, not merged
// into the ended appointment ("bereits in Bearbeitung", nothing happens).
// For the customer at the slot, across both appointments: the ended one's
// released hold, declined intent and payment-failed message beside the
// later one's booking, its deposit captured once, and its confirmation.
func TestMatrix18ClosedIntentIsNotMergedInto(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store := &dedup.Store{Pool: e.pool, Window: 3 * time.Minute, Retention: 72 * time.Hour, Location: time.UTC}
	req := request(t, "+4915112345618", time.Wednesday, 9)
	req.Tuning = shortSteps
	req.PaymentMethod = "pm_card_chargeDeclined"
	wish := dedup.Intent{
		Tenant: req.Tenant, IntentID: req.IntentID, Customer: req.Customer, Service: req.Service, SlotStart: req.SlotStart,
		Channel: "whatsapp", EventID: "SM-first", WorkflowID: appointment.WorkflowID(req.Tenant, req.IntentID),
		ConversationID: conversation.LegacyWorkflowID(req.Tenant, req.Customer),
	}
	first, err := store.Decide(ctx, "dedup-first-"+req.IntentID, wish)
	require.NoError(t, err)
	require.Equal(t, dedup.New, first.Kind)

	refusal := testsupport.Refuse(t, e.pool, "refuse_close", "BEFORE UPDATE OF closed_at", "booking_intents", "")
	closeAttempts := refusal.Attempts
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	require.Equal(t, first.WorkflowID, r.GetID())
	budget := 3 * int(shortSteps.ActivityAttempts)
	endWhen(t, r, "closing the intent refused for three step budgets", func() bool { return closeAttempts() >= budget })
	refusal.Lift()
	st := result(t, r)
	require.Equal(t, workflows.StatusPaymentFailed, st.Status, st.Reason)

	// The same wish, later (the customer has fixed the card).
	wish.EventID = "SM-second"
	second, err := store.Decide(ctx, "dedup-second-"+req.IntentID, wish)
	require.NoError(t, err)
	require.Equal(t, dedup.New, second.Kind, "the ended appointment is no merge target")
	require.NotEqual(t, first.WorkflowID, second.WorkflowID)
	again := req
	again.PaymentMethod = "pm_card_visa"
	r2, err := e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: second.WorkflowID, TaskQueue: e.queue}, appointment.WorkflowName, again)
	require.NoError(t, err)
	st2 := result(t, r2)
	require.Equal(t, workflows.StatusConfirmed, st2.Status, st2.Reason)
	require.Equal(t, effects{Reservations: map[string]int{"released": 1, "confirmed": 1}, Intents: map[string]int{"requires_payment_method": 1, "succeeded": 1},
		Captured: 2000, Messages: 2}, e.effects(t, req.Customer, req.SlotStart), "the later wish is booked beside the ended one's traces")
	var kinds []string
	rows, err := e.pool.Query(ctx, `SELECT decision FROM dedup_decisions WHERE intent_id = $1 ORDER BY created_at`, req.IntentID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		kinds = append(kinds, k)
	}
	require.Equal(t, []string{"new", "new"}, kinds)
	require.GreaterOrEqual(t, closeAttempts(), budget, "the database refused longer than the step budget")
}

// TestWishAfterTerminatedAppointmentIsNewAttempt: dedup asks Temporal
// whether a merge target is over. While the appointment runs, the same
// wish merges; once it was terminated (its intent never closed), the same
// wish is a new attempt under a new workflow ID, not a merge into nothing.
func TestWishAfterTerminatedAppointmentIsNewAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // no worker: the appointment waits, running, until terminated
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := &dedup.Store{Pool: e.pool, Window: 3 * time.Minute, Retention: 72 * time.Hour, Location: time.UTC,
		Target: func(ctx context.Context, id string) (dedup.Target, error) {
			return workflows.BookingTarget(ctx, e.tc, id)
		}}
	req := request(t, "+4915112345619", time.Friday, 10)
	wish := dedup.Intent{
		Tenant: req.Tenant, IntentID: req.IntentID, Customer: req.Customer, Service: req.Service, SlotStart: req.SlotStart,
		Channel: "voice", EventID: "CA-first", WorkflowID: appointment.WorkflowID(req.Tenant, req.IntentID),
		ConversationID: conversation.LegacyWorkflowID(req.Tenant, req.Customer),
	}
	decide := func(event string) dedup.Decision {
		wish.EventID = event
		d, err := store.Decide(ctx, "dedup-"+event+"-"+req.IntentID, wish)
		require.NoError(t, err)
		return d
	}
	require.Equal(t, dedup.New, decide("CA-first").Kind)
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	running := decide("SM-while-running")
	require.Equal(t, dedup.Merge, running.Kind, "a running appointment is the merge target")
	require.Equal(t, r.GetID(), running.WorkflowID)

	require.NoError(t, e.tc.TerminateWorkflow(ctx, r.GetID(), "", "test: an operator terminated the booking"))
	after := decide("SM-after-terminate")
	require.Equal(t, dedup.New, after.Kind, "a terminated appointment is no merge target")
	require.NotEqual(t, r.GetID(), after.WorkflowID)
	var workflowID string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT workflow_id FROM booking_intents WHERE intent_id = $1 AND closed_at IS NULL`, req.IntentID).Scan(&workflowID))
	require.Equal(t, after.WorkflowID, workflowID, "the intent now points at the new attempt")
}
