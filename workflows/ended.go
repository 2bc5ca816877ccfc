package workflows

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// AppointmentEnded reports whether the appointment workflowID has ended
// without a booking: closed (completed, failed, terminated, timed out)
// with a BookingStatus other than Confirmed. A running appointment, a
// confirmed one and one that does not exist (yet) have not. dedup uses it
// so that a wish never merges into an appointment that is over.
func AppointmentEnded(ctx context.Context, c client.Client, workflowID string) (bool, error) {
	resp, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe appointment %s: %w", workflowID, err)
	}
	info := resp.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return false, nil
	}
	var status string
	if p, ok := info.GetSearchAttributes().GetIndexedFields()[BookingStatusKey.GetName()]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &status); err != nil {
			return false, fmt.Errorf("read BookingStatus of %s: %w", workflowID, err)
		}
	}
	return BookingStatus(status) != StatusConfirmed, nil
}
