package devserver_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	enumsspb "go.temporal.io/server/api/enums/v1"
	historyspb "go.temporal.io/server/api/history/v1"
	"go.temporal.io/server/common/clock"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/namespace"
	"go.temporal.io/server/service/history/events"

	"github.com/bookonce/bookonce/internal/devserver"
)

// TestHistoryNotifierDropsACloseBehindAnUnreadChange pins the cause of the
// 20 s stall (docs/benchmarks.md): Temporal's history service hands each
// result waiter a channel of one notification and drops a notification
// that finds it full, so a close arriving before the waiter has taken the
// previous change never reaches it. If a Temporal upgrade makes this test
// fail, the close is no longer lost and the short long-poll expiry in
// internal/devserver can go.
func TestHistoryNotifierDropsACloseBehindAnUnreadChange(t *testing.T) {
	t.Parallel()
	n := events.NewNotifier(clock.NewRealTimeSource(), metrics.NoopMetricsHandler, func(namespace.ID, string) int32 { return 1 })
	n.Start()
	defer n.Stop()
	notification := func(id string, nextEventID int64, status enumspb.WorkflowExecutionStatus) *events.Notification {
		return events.NewNotification("ns", &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run"},
			1, 1, nextEventID, 0, enumsspb.WORKFLOW_EXECUTION_STATE_RUNNING, status, &historyspb.VersionHistories{}, nil)
	}
	waiter := notification("booking", 0, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING).ID
	_, ch, err := n.WatchHistoryEvent(waiter)
	require.NoError(t, err)
	// The notifications are dispatched in order by one goroutine: once
	// the sentinel's arrives, the workflow's three have been dispatched.
	sentinel := notification("sentinel", 0, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING).ID
	_, sentinelCh, err := n.WatchHistoryEvent(sentinel)
	require.NoError(t, err)

	n.NotifyNewHistoryEvent(notification("booking", 5, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING))
	n.NotifyNewHistoryEvent(notification("booking", 6, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING))
	n.NotifyNewHistoryEvent(notification("booking", 7, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED))
	n.NotifyNewHistoryEvent(notification("sentinel", 2, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING))
	select {
	case <-sentinelCh:
	case <-time.After(10 * time.Second):
		t.Fatal("the notifier dispatched nothing")
	}

	first := <-ch
	require.Equal(t, int64(5), first.NextEventID, "the waiter holds the first change")
	select {
	case late := <-ch:
		t.Fatalf("the notifier kept a later notification (next event %d, %v): the close is no longer dropped", late.NextEventID, late.WorkflowStatus)
	default:
	}
}

// TestResultLongPollEndsWithinTheExpiry starts the embedded server as
// `make run` does and long-polls for the close of a workflow that nobody
// runs: the poll must come back empty within seconds, so a waiter whose
// close notification was dropped asks again that soon. With Temporal's
// default (history.longPollExpirationInterval, 20 s) it came back after
// 20 s, the stall bookings saw.
func TestResultLongPollEndsWithinTheExpiry(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: "127.0.0.1:0", DatabaseFile: filepath.Join(t.TempDir(), "temporal.db"),
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, ts.Stop()) }()
	c, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer c.Close()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "never-runs", TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)

	pollCtx, pollCancel := context.WithTimeout(ctx, time.Minute)
	defer pollCancel()
	start := time.Now()
	resp, err := c.WorkflowService().GetWorkflowExecutionHistory(pollCtx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              ts.Namespace(),
		Execution:              &commonpb.WorkflowExecution{WorkflowId: run.GetID(), RunId: run.GetRunID()},
		WaitNewEvent:           true,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
	})
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("an unanswered result long poll came back after %v", took)
	require.Empty(t, resp.GetHistory().GetEvents(), "the workflow never closed")
	require.NotEmpty(t, resp.GetNextPageToken(), "the client is told to poll again")
	require.Less(t, took, 10*time.Second, "a missed close would keep a result waiter this long")
}
