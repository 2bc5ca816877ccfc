package workflows_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestRecordHistoriesCancelledUnpaid records an appointment cancelled by
// the customer while it waits for its payment link (versioned:
// appointment-publishes-cancelling): it shows Cancelling while it
// releases the hold and expires the link. Runs with `make histories`.
func TestRecordHistoriesCancelledUnpaid(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340021", time.Wednesday, 11)
	req.PaymentMethod = "" // the deposit is paid by link
	run, _, err := appointment.Start(ctx, s.tc, s.queue, req)
	require.NoError(t, err)
	testsupport.Eventually(t, time.Minute, "the payment link", func() bool {
		st, err := appointment.StatusOf(ctx, s.tc, run.GetID())
		return err == nil && st.PaymentURL != ""
	})
	require.NoError(t, s.tc.SignalWorkflow(ctx, run.GetID(), "", workflows.SignalCancel, nil))
	var st appointment.State
	require.NoError(t, run.Get(ctx, &st))
	require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
	s.save(t, ctx, run.GetID(), "cancelled-unpaid.appointment.json")
}

// TestRecordHistoriesNotBooked records an appointment whose card is
// declined and which tells the customer so (versioned: tell-not-booked).
// Runs with `make histories`.
func TestRecordHistoriesNotBooked(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340022", time.Wednesday, 12)
	req.PaymentMethod = "pm_card_chargeDeclined"
	run, st := s.book(t, ctx, req)
	require.Equal(t, workflows.StatusPaymentFailed, st.Status, st.Reason)
	s.save(t, ctx, run.GetID(), "not-booked.appointment.json")
}
