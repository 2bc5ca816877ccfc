package workflows_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// TestRecordHistoriesLifecycle records a booking handed to its lifecycle
// (versioned: booking-lifecycle) and the lifecycle's cancel Update. The
// lifecycle runs on until its slot has passed, so its history is recorded
// open, right after the cancel's answer: the replayer replays it up to
// there. Runs with `make histories`.
func TestRecordHistoriesLifecycle(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340010", time.Tuesday, 11)
	req.SlotStart = testsupport.NextWeekdayAfter(t, time.Tuesday, 11, 48*time.Hour) // a free cancellation
	run, st := s.book(t, ctx, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, workflows.BookingWorkflowID(run.GetID()), st.Lifecycle)
	answer, err := workflows.CancelAppointment(ctx, s.tc, run.GetID(), workflows.CancelUpdateID("demo", "record-1"), "recorded")
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, answer.Status, answer.Reason)
	require.Equal(t, workflows.DepositRefunded, answer.Deposit)
	s.save(t, ctx, run.GetID(), "lifecycle.appointment.json")
	writeHistory(t, fetchHistory(t, ctx, s.tc, st.Lifecycle, ""), "lifecycle-cancel.booking.json")
}
