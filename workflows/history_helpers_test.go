package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

func workflowExecution(r client.WorkflowRun) *commonpb.WorkflowExecution {
	return &commonpb.WorkflowExecution{WorkflowId: r.GetID(), RunId: r.GetRunID()}
}

// firstWorkflowTaskCompleted is the earliest reset point: everything after
// it, every activity included, runs again in the new run.
func firstWorkflowTaskCompleted(t *testing.T, c client.Client, r client.WorkflowRun) int64 {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), r.GetID(), r.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
			return ev.GetEventId()
		}
	}
	t.Fatal("no completed workflow task in history")
	return 0
}
