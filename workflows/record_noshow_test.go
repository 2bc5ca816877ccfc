package workflows_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestRecordHistoriesNoShow records a lifecycle taking the no_show Update
// (versioned: booking-no-show). The server cannot skip time, so the
// lifecycle is started directly with a slot that began ten minutes ago;
// its history is recorded open, right after the answer. Runs with
// `make histories`.
func TestRecordHistoriesNoShow(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ref := appointment.WorkflowID("demo", "record-no-show")
	start := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Minute)
	_, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: lifecycle.WorkflowID(ref), TaskQueue: s.queue},
		lifecycle.WorkflowName, lifecycle.Input{
			Tenant: "demo", Reference: ref, Customer: "+4915112340011", Service: "tire-change", Channel: workflows.ChannelAPI,
			BookingID: "bk_record", SlotStart: start, SlotEnd: start.Add(time.Hour), Deposit: 2000, Currency: "eur",
		})
	require.NoError(t, err)
	answer, err := lifecycle.MarkNoShow(ctx, s.tc, ref, lifecycle.NoShowUpdateID("demo", "record-1"), lifecycle.NoShowRequest{Note: "recorded"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusNoShow, answer.Status, answer.Reason)
	require.Equal(t, lifecycle.DepositKept, answer.Deposit)
	writeHistory(t, fetchHistory(t, ctx, s.tc, lifecycle.WorkflowID(ref), ""), "lifecycle-noshow.booking.json")
}
