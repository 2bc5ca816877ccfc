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
	status, running, err := PublishedStatus(ctx, c, workflowID)
	if err != nil || running || status == "" {
		return false, err
	}
	return status != StatusConfirmed, nil
}

// PublishedStatus is the BookingStatus the appointment workflowID last
// published and whether it still runs, read from the server alone (no
// worker answers it, unlike QueryStatus): "" when the workflow does not
// exist (yet). A closed appointment without a status (none published)
// reads as Rejected.
func PublishedStatus(ctx context.Context, c client.Client, workflowID string) (status BookingStatus, running bool, err error) {
	resp, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("describe appointment %s: %w", workflowID, err)
	}
	info := resp.GetWorkflowExecutionInfo()
	var s string
	if p, ok := info.GetSearchAttributes().GetIndexedFields()[BookingStatusKey.GetName()]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			return "", false, fmt.Errorf("read BookingStatus of %s: %w", workflowID, err)
		}
	}
	running = info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	if s == "" && !running {
		s = string(StatusRejected)
	}
	return BookingStatus(s), running, nil
}
