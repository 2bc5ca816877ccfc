package workflows_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
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
	run, st := s.bookAndCancel(t, ctx, "+4915112340010", "record-1")
	s.save(t, ctx, run.GetID(), "lifecycle.appointment.json")
	writeHistory(t, fetchHistory(t, ctx, s.tc, st.Lifecycle, ""), "lifecycle-cancel.booking.json")
}

// TestRecordHistoriesCancelPublished records a lifecycle cancel that
// publishes Cancelled before it tells the customer (versioned:
// publish-cancel-before-telling). Runs with `make histories`.
func TestRecordHistoriesCancelPublished(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, st := s.bookAndCancel(t, ctx, "+4915112340015", "record-2")
	writeHistory(t, fetchHistory(t, ctx, s.tc, st.Lifecycle, ""), "lifecycle-cancel-published.booking.json")
}

// bookAndCancel books a slot far enough ahead for a free cancellation,
// then cancels it through the lifecycle's Update, refunded.
func (s recordStack) bookAndCancel(t *testing.T, ctx context.Context, customer, updateID string) (client.WorkflowRun, appointment.State) {
	t.Helper()
	req := recordRequest(t, customer, time.Tuesday, 11)
	req.SlotStart = testsupport.NextWeekdayAfter(t, time.Tuesday, 11, 48*time.Hour) // a free cancellation
	run, st := s.book(t, ctx, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, lifecycle.WorkflowID(run.GetID()), st.Lifecycle)
	answer, err := lifecycle.Cancel(ctx, s.tc, run.GetID(), lifecycle.CancelUpdateID("demo", updateID), lifecycle.CancelRequest{Reason: "recorded"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, answer.Status, answer.Reason)
	require.Equal(t, lifecycle.DepositRefunded, answer.Deposit)
	return run, st
}

// TestRecordHistoriesLateCancel records an appointment (versioned:
// forward-late-cancel) that a cancel reaches while it starts the
// lifecycle: the cancel is forwarded as the lifecycle's cancel Update.
// Runs with `make histories`.
func TestRecordHistoriesLateCancel(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	gate := testsupport.NewChildGate("BookingWorkflow")
	s := newRecordStack(t, nil, gate)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340012", time.Tuesday, 11)
	run, _, err := appointment.Start(ctx, s.tc, s.queue, req)
	require.NoError(t, err)
	gate.SignalAtGate(ctx, t, s.tc, run.GetID(), workflows.SignalCancel)
	var st appointment.State
	require.NoError(t, run.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	s.save(t, ctx, run.GetID(), "late-cancel.appointment.json")
}

// TestRecordHistoriesReschedule records a lifecycle (versioned:
// booking-reschedule) through a refused move (the slot taken), a move
// (hold, confirm, cancel of the old booking, the message, the timers
// re-planned) and a cancel of the moved booking, recorded open after the
// cancel's answer. Runs with `make histories`.
func TestRecordHistoriesReschedule(t *testing.T) {
	if os.Getenv(recordHistoriesEnv) != "1" {
		t.Skipf("set %s=1 to record workflow histories into %s (make histories)", recordHistoriesEnv, historiesDir)
	}
	s := newRecordStack(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := recordRequest(t, "+4915112340011", time.Tuesday, 11)
	req.SlotStart = testsupport.NextWeekdayAfter(t, time.Tuesday, 11, 48*time.Hour)
	run, st := s.book(t, ctx, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	// Another customer holds every resource at 14:00: the move there is refused.
	taken := req.SlotStart.Add(3 * time.Hour)
	desk := calendar.NewClient(s.calendarURL, config.DefaultAPIToken)
	for i, res := range []string{"bay-1", "bay-2", "tech-anna"} {
		_, err := desk.CreateHold(ctx, "record-block-"+res, calendar.HoldRequest{
			ResourceID: res, Service: req.Service, Start: taken, Customer: "+49151123400" + strconv.Itoa(20+i), Reference: "desk-" + res + "-" + run.GetID(),
		})
		require.NoError(t, err)
	}
	_, err := lifecycle.Reschedule(ctx, s.tc, run.GetID(), lifecycle.RescheduleUpdateID("demo", "record-taken"),
		lifecycle.RescheduleRequest{Start: taken})
	require.ErrorContains(t, err, "taken")
	moved, err := lifecycle.Reschedule(ctx, s.tc, run.GetID(), lifecycle.RescheduleUpdateID("demo", "record-1"),
		lifecycle.RescheduleRequest{Start: req.SlotStart.AddDate(0, 0, 1)})
	require.NoError(t, err)
	require.Len(t, moved.Moves, 1)
	answer, err := lifecycle.Cancel(ctx, s.tc, run.GetID(), lifecycle.CancelUpdateID("demo", "record-1"), lifecycle.CancelRequest{Reason: "recorded"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, answer.Status, answer.Reason)
	writeHistory(t, fetchHistory(t, ctx, s.tc, st.Lifecycle, ""), "lifecycle-reschedule.booking.json")
}
