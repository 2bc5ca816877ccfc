package workflows_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestRecordHistoriesReminder records a lifecycle that sends a reminder
// (due at once: a negative reminder lead, as the chaos drill runs it) and
// is then cancelled, recorded open right after the cancel's answer. Runs
// with `make histories`.
func TestRecordHistoriesReminder(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340012", time.Thursday, 11)
	req.SlotStart = testsupport.NextWeekdayAfter(t, time.Thursday, 11, 48*time.Hour) // a free cancellation
	req.Terms = &tenants.Terms{Reminders: []time.Duration{100 * time.Hour}}
	req.Tuning.ReminderLead = workflows.Duration(-87600 * time.Hour)
	run, st := s.book(t, ctx, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	ref := run.GetID()
	testsupport.Eventually(t, time.Minute, "the reminder sent", func() bool {
		st, err := lifecycle.StateOf(ctx, s.tc, ref)
		return err == nil && len(st.Reminders) == 1
	})
	answer, err := lifecycle.Cancel(ctx, s.tc, ref, lifecycle.CancelUpdateID("demo", "record-reminder-1"), lifecycle.CancelRequest{Reason: "recorded"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, answer.Status, answer.Reason)
	writeHistory(t, fetchHistory(t, ctx, s.tc, lifecycle.WorkflowID(ref), ""), "lifecycle-reminder.booking.json")
}
