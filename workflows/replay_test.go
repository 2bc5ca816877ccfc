package workflows_test

// Replay tests: the histories in testdata/histories were recorded from real
// runs (TestRecordHistories, `make histories`), and those in
// testdata/histories/release-N by the code of release N (frozen with `make
// release-histories`). Replaying them with the current workflow code proves
// a change is deterministic for workflows that are already running; a change
// that is not fails here, before it reaches a worker with live executions.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// historiesDir holds the recorded histories, one protojson History a file.
var historiesDir = filepath.Join("testdata", "histories")

// recordedHistories are the files TestRecordHistories writes; each must be
// present, so a lost file does not silently shrink the replay coverage.
var recordedHistories = []string{
	"happy.appointment.json",
	"payment-declined.appointment.json",
	"hold-expired.appointment.json",
	"slot-taken.appointment.json",
	"review-abandon.appointment.json",
	"conversation-continue-as-new.json",
	"already-booked.appointment.json",
	"payment-link.appointment.json",
	"payment-link.payment.json",
	"payment-link-rounds.appointment.json",
	"payment-link-rounds.payment.json",
	"lifecycle.appointment.json",
	"lifecycle-cancel.booking.json",
	"lifecycle-noshow.booking.json",
	"lifecycle-reschedule.booking.json",
	"conversation-changes.conversation.json",
	"lifecycle-reminder.booking.json",
	"handover-legacy.conversation.json",
	"handover-keyed.conversation.json",
	"keyed.appointment.json",
	"local-reads.conversation.json",
	"late-cancel.appointment.json",
	"hold-reconciled.appointment.json",
	"link-reread.appointment.json",
	"link-reread.payment.json",
	"lifecycle-cancel-published.booking.json",
	"conversation-changes-outlast.conversation.json",
	"conversation-wish-outlast.conversation.json",
	"link-never-made.appointment.json",
	"link-never-made.payment.json",
	"keyed-intent.conversation.json",
	"cancelled-unpaid.appointment.json",
	"not-booked.appointment.json",
	"lifecycle-shop-calendar.booking.json",
}

// replayLogger sends the replayer's warnings and errors to the test log.
type replayLogger struct{ t *testing.T }

func (l replayLogger) Debug(string, ...any) {}
func (l replayLogger) Info(string, ...any)  {}
func (l replayLogger) Warn(msg string, kv ...any) {
	l.t.Helper()
	l.t.Logf("replayer WARN %s %v", msg, kv)
}
func (l replayLogger) Error(msg string, kv ...any) {
	l.t.Helper()
	l.t.Logf("replayer ERROR %s %v", msg, kv)
}

func newReplayer() worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	appointment.Register(r)
	deposit.Register(r)
	conversation.Register(r)
	lifecycle.Register(r)
	return r
}

// loadHistory reads a recorded history and the execution it belongs to.
func loadHistory(t *testing.T, file string) (*historypb.History, workflow.Execution) {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, h.GetEvents())
	started := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
	require.NotNil(t, started, "%s does not start with WorkflowExecutionStarted", file)
	require.NotEmpty(t, started.GetWorkflowId())
	return h, workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()}
}

// replayHistory replays a history under its original workflow ID. Without it the
// replayer runs the history as workflow "ReplayId", and the appointment,
// which derives its payment saga's ID from its own, would start a child
// "payment:ReplayId" that is not in the history: a false non-determinism.
func replayHistory(t *testing.T, r worker.WorkflowReplayer, h *historypb.History, exec workflow.Execution) error {
	t.Helper()
	return r.ReplayWorkflowHistoryWithOptions(replayLogger{t}, h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec})
}

func TestReplayRecordedHistories(t *testing.T) {
	for _, name := range recordedHistories {
		require.FileExists(t, filepath.Join(historiesDir, name), "record it with `make histories`")
	}
	files, err := filepath.Glob(filepath.Join(historiesDir, "*.json"))
	require.NoError(t, err)
	// Histories recorded by earlier releases' code: the runs those releases
	// left open are what today's code meets first after a deploy.
	released, err := filepath.Glob(filepath.Join(historiesDir, "release-*", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, released, "no release's corpus in %s/release-*: freeze one with `make release-histories`", historiesDir)
	for _, file := range append(files, released...) {
		name, _ := filepath.Rel(historiesDir, file)
		t.Run(name, func(t *testing.T) {
			h, exec := loadHistory(t, file)
			require.NoError(t, replayHistory(t, newReplayer(), h, exec),
				"the current workflow code does not replay %s: a non-deterministic change needs workflow.GetVersion", file)
		})
	}
}

// TestReplayCatchesNonDeterminism registers deliberately changed code under
// the recorded workflow type's name: the replayer must refuse each one, or
// the replay test above proves nothing.
func TestReplayCatchesNonDeterminism(t *testing.T) {
	// Each replay gets the history fresh: the replayer changes the events
	// it is given (after a failed replay of this file they differ from
	// it), and the control then failed on events a variant had left.
	happy := filepath.Join(historiesDir, "happy.appointment.json")

	var a *activities.Activities
	opts := func(ctx workflow.Context, id string) workflow.Context {
		return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{ActivityID: id, StartToCloseTimeout: 15 * time.Second})
	}
	// upsert publishes the same search attributes the real code does first,
	// so the change is detected at the step that differs, not at the start.
	upsert := func(ctx workflow.Context, req appointment.Request) error {
		return workflow.UpsertTypedSearchAttributes(ctx,
			workflows.BookingStatusKey.ValueSet(string(workflows.StatusRequested)),
			workflows.CustomerPhoneKey.ValueSet(req.Customer),
			workflows.ChannelKey.ValueSet(string(req.Channel)),
			workflows.ServiceKey.ValueSet(req.Service),
			workflows.SlotStartKey.ValueSet(req.SlotStart.UTC()),
		)
	}
	changed := []struct {
		name string
		fn   func(workflow.Context, appointment.Request) (appointment.State, error)
	}{
		{"confirms before holding", func(ctx workflow.Context, req appointment.Request) (appointment.State, error) {
			if err := upsert(ctx, req); err != nil {
				return appointment.State{}, err
			}
			err := workflow.ExecuteActivity(opts(ctx, "confirm-hold"), a.ConfirmHold, activities.ConfirmHoldInput{Tenant: req.Tenant}).Get(ctx, nil)
			return appointment.State{}, err
		}},
		{"skips the hold, starts the deposit", func(ctx workflow.Context, req appointment.Request) (appointment.State, error) {
			if err := upsert(ctx, req); err != nil {
				return appointment.State{}, err
			}
			ref := workflow.GetInfo(ctx).WorkflowExecution.ID
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: deposit.WorkflowID(ref)})
			var ps deposit.State
			err := workflow.ExecuteChildWorkflow(cctx, deposit.WorkflowName, deposit.Request{Tenant: req.Tenant, Reference: ref}).Get(ctx, &ps)
			return appointment.State{}, err
		}},
		{"waits before holding", func(ctx workflow.Context, req appointment.Request) (appointment.State, error) {
			if err := workflow.Sleep(ctx, time.Second); err != nil {
				return appointment.State{}, err
			}
			return appointment.Workflow(ctx, req)
		}},
		{"holds under another activity ID", func(ctx workflow.Context, req appointment.Request) (appointment.State, error) {
			if err := upsert(ctx, req); err != nil {
				return appointment.State{}, err
			}
			err := workflow.ExecuteActivity(opts(ctx, "hold-slot-v2"), a.HoldSlot, activities.HoldSlotInput{Tenant: req.Tenant}).Get(ctx, nil)
			return appointment.State{}, err
		}},
	}
	for _, c := range changed {
		t.Run(c.name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(c.fn, workflow.RegisterOptions{Name: "AppointmentWorkflow"})
			deposit.Register(r)
			history, exec := loadHistory(t, happy)
			err := replayHistory(t, r, history, exec)
			require.Error(t, err, "changed code replayed without complaint")
			require.Contains(t, err.Error(), "TMPRL1100", "want a non-determinism error, got: %v", err)
			t.Log(fmt.Sprint(err))
		})
	}

	// The unchanged code replays the same history (the control).
	history, exec := loadHistory(t, happy)
	require.NoError(t, replayHistory(t, newReplayer(), history, exec))
}
