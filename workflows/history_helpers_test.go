package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

func workflowExecution(r client.WorkflowRun) *commonpb.WorkflowExecution {
	return &commonpb.WorkflowExecution{WorkflowId: r.GetID(), RunId: r.GetRunID()}
}

// history returns the run's events so far.
func history(t *testing.T, c client.Client, r client.WorkflowRun) []*historypb.HistoryEvent {
	t.Helper()
	var out []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(context.Background(), r.GetID(), r.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

// firstWorkflowTaskCompleted is the earliest reset point: everything after
// it, every activity included, runs again in the new run.
func firstWorkflowTaskCompleted(t *testing.T, c client.Client, r client.WorkflowRun) int64 {
	t.Helper()
	for _, ev := range history(t, c, r) {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return ev.GetEventId()
		}
	}
	t.Fatal("no completed workflow task in history")
	return 0
}

// taskCompletedAfterAuthorisation is the reset point right after the
// card's authorisation answered: the workflow task that handled its
// completion. Resetting there keeps the hold and the authorisation in the
// new run's history and runs everything after it again.
func taskCompletedAfterAuthorisation(t *testing.T, c client.Client, r client.WorkflowRun) int64 {
	t.Helper()
	authorizations := map[int64]bool{} // scheduled event IDs
	authorised := false
	for _, ev := range history(t, c, r) {
		if s := ev.GetActivityTaskScheduledEventAttributes(); s != nil && s.GetActivityType().GetName() == "AuthorizeDeposit" {
			authorizations[ev.GetEventId()] = true
		}
		if done := ev.GetActivityTaskCompletedEventAttributes(); done != nil && authorizations[done.GetScheduledEventId()] {
			authorised = true
		}
		if authorised && ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return ev.GetEventId()
		}
	}
	t.Fatal("no completed workflow task after the authorisation")
	return 0
}
