package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/dedup"
)

// AppointmentEnded reports whether the appointment workflowID has ended
// without a booking: closed (completed, failed, terminated, timed out)
// with a BookingStatus other than Confirmed. A running appointment, a
// confirmed one and one that does not exist (yet) have not.
func AppointmentEnded(ctx context.Context, c client.Client, workflowID string) (bool, error) {
	status, running, err := PublishedStatus(ctx, c, workflowID)
	return endedWithoutBooking(status, running), err
}

// endedWithoutBooking is AppointmentEnded's rule over what the appointment
// published.
func endedWithoutBooking(status BookingStatus, running bool) bool {
	return !running && status != "" && status != StatusConfirmed
}

// BookingTarget is what dedup asks of the appointment workflowID an
// intent points to (dedup.Store.Target), read from the server alone:
// over when the appointment ended without a booking, or when its booking's
// lifecycle is cancelled, completed or a no-show; ending while the
// appointment or its lifecycle is being cancelled (StatusCancelling); the
// lifecycle's current slot otherwise (a move changes it). A wish never
// merges into a booking that is over, merges into a moved one only for
// its new slot, and is told when the booking it meets is ending.
func BookingTarget(ctx context.Context, c client.Client, workflowID string) (dedup.Target, error) {
	status, running, err := PublishedStatus(ctx, c, workflowID)
	switch {
	case err != nil:
		return dedup.Target{}, err
	case endedWithoutBooking(status, running):
		return dedup.Target{Over: true}, nil
	case running && status == StatusCancelling:
		return dedup.Target{Ending: true}, nil
	}
	life, err := describeBooking(ctx, c, activities.BookingWorkflowID(workflowID))
	if err != nil || life.status == "" {
		return dedup.Target{}, err // no lifecycle (yet): the appointment decides
	}
	return dedup.Target{Over: LifecycleOver(life.status), Ending: life.status == StatusCancelling, Slot: life.slot}, nil
}

// LifecycleOver reports whether a booking whose lifecycle published
// status is over for its customer: cancelled, completed or a no-show.
func LifecycleOver(status BookingStatus) bool {
	switch status {
	case StatusCancelled, StatusCompleted, StatusNoShow:
		return true
	}
	return false
}

// BookingNow is what a customer's booking is now (BookingStatusOf).
type BookingNow struct {
	// Status is the lifecycle's once the appointment is confirmed and its
	// lifecycle runs (cancelled, no-show, completed are known there only),
	// else the appointment's; "" when neither exists (yet).
	Status BookingStatus
	// Running is the appointment's.
	Running bool
	// Slot is the lifecycle's current start (a move changes it); zero
	// before the lifecycle published one.
	Slot time.Time
}

// BookingStatusOf reads, from the server alone, what the booking of the
// appointment workflowID is now.
func BookingStatusOf(ctx context.Context, c client.Client, workflowID string) (BookingNow, error) {
	status, running, err := PublishedStatus(ctx, c, workflowID)
	if err != nil || status != StatusConfirmed {
		return BookingNow{Status: status, Running: running}, err
	}
	now, err := ConfirmedNow(ctx, c, workflowID)
	now.Running = running
	return now, err
}

// ConfirmedNow is BookingStatusOf for an appointment the caller already
// read as confirmed: only its lifecycle is read (Running is not set).
// The status stays Confirmed until the lifecycle published one.
func ConfirmedNow(ctx context.Context, c client.Client, workflowID string) (BookingNow, error) {
	now := BookingNow{Status: StatusConfirmed}
	life, err := describeBooking(ctx, c, activities.BookingWorkflowID(workflowID))
	if err != nil || life.status == "" {
		return now, err
	}
	now.Status, now.Slot = life.status, life.slot
	return now, nil
}

// PublishedStatus is the BookingStatus the appointment workflowID last
// published and whether it still runs, read from the server alone (no
// worker answers it, unlike QueryStatus): "" when the workflow does not
// exist (yet). A closed appointment without a status (none published)
// reads as Rejected.
func PublishedStatus(ctx context.Context, c client.Client, workflowID string) (status BookingStatus, running bool, err error) {
	d, err := describeBooking(ctx, c, workflowID)
	if err != nil || !d.found {
		return "", false, err
	}
	if d.status == "" && !d.running {
		d.status = StatusRejected
	}
	return d.status, d.running, nil
}

// BookingExists reports whether the workflow workflowID exists, running
// or closed.
func BookingExists(ctx context.Context, c client.Client, workflowID string) (bool, error) {
	d, err := describeBooking(ctx, c, workflowID)
	return d.found, err
}

// published is what a workflow of a booking last published in its
// search attributes.
type published struct {
	found, running bool
	status         BookingStatus
	slot           time.Time
}

// describeBooking reads the BookingStatus and SlotStart workflowID last
// published; found is false when it does not exist (yet).
func describeBooking(ctx context.Context, c client.Client, workflowID string) (published, error) {
	resp, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return published{}, nil
	}
	if err != nil {
		return published{}, fmt.Errorf("describe %s: %w", workflowID, err)
	}
	info := resp.GetWorkflowExecutionInfo()
	fields := info.GetSearchAttributes().GetIndexedFields()
	d := published{found: true, running: info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}
	var s string
	if p, ok := fields[BookingStatusKey.GetName()]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			return published{}, fmt.Errorf("read BookingStatus of %s: %w", workflowID, err)
		}
	}
	d.status = BookingStatus(s)
	if p, ok := fields[SlotStartKey.GetName()]; ok {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &d.slot); err != nil {
			return published{}, fmt.Errorf("read SlotStart of %s: %w", workflowID, err)
		}
	}
	return d, nil
}
