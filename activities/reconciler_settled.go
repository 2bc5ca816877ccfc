package activities

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// settledSagas are the sagas of the sweep's tenant started since since
// whose latest run completed as confirmed, from one paged visibility
// query: such a saga settled its effects for good, so the sweep need not
// describe it. Without this, a sweep described the saga of every booking
// confirmed within its look-back, every five minutes: 20,000
// confirmations a day were 20,000 describes a sweep. A saga the query
// does not show (started earlier, or not yet visible) is described as
// before, and so is one with a later run (a reset): that run owns the
// effects.
func (r *Reconciler) settledSagas(ctx context.Context, shape SagaShape, since time.Time) (map[string]bool, error) {
	q := fmt.Sprintf("WorkflowId STARTS_WITH %q AND StartTime >= %q", shape.ReferencePrefix, since.UTC().Format(time.RFC3339Nano))
	latest := map[string]*workflowpb.WorkflowExecutionInfo{}
	var token []byte
	for pages := 0; ; pages++ {
		page, err := r.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: 1000, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the sagas started since %s: %w", since.Format(time.RFC3339), err)
		}
		for _, e := range page.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			if cur := latest[id]; cur == nil || e.GetStartTime().AsTime().After(cur.GetStartTime().AsTime()) {
				latest[id] = e
			}
		}
		alive(ctx, pages)
		if token = page.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	settled := map[string]bool{}
	for id, e := range latest {
		if e.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			continue
		}
		p := e.GetSearchAttributes().GetIndexedFields()[shape.StatusAttribute]
		if p == nil {
			continue
		}
		var status string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &status); err != nil {
			return nil, fmt.Errorf("decode %s of %s: %w", shape.StatusAttribute, id, err)
		}
		settled[id] = status == shape.Confirmed
	}
	return settled, nil
}
