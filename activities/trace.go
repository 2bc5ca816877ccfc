package activities

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/bookonce/bookonce/internal/tracing"
)

// traceBooking tags the activity's span (started by the worker's tracing
// interceptor) with the booking it acts for: the tenant and, when known,
// the appointment (the reference every downstream object carries). Never
// the customer's number or a message's text.
func traceBooking(ctx context.Context, tenant, reference string) {
	attrs := []attribute.KeyValue{tracing.Tenant.String(tenant)}
	if reference != "" {
		attrs = append(attrs, tracing.AppointmentID.String(reference))
	}
	tracing.Tag(ctx, attrs...)
}

// traceID tags the activity's span with a downstream ID as soon as it is
// learned (a hold, a reservation, a payment intent); empty IDs are not
// tagged.
func traceID(ctx context.Context, key attribute.Key, id string) {
	if id != "" {
		tracing.Tag(ctx, key.String(id))
	}
}
