package agent

// ToolName names a tool, the same over MCP and HTTP.
type ToolName string

// The tools.
const (
	ToolListServices      ToolName = "list_services"
	ToolFindSlots         ToolName = "find_slots"
	ToolBeginOperation    ToolName = "begin_operation"
	ToolBookAppointment   ToolName = "book_appointment"
	ToolGetBooking        ToolName = "get_booking"
	ToolListBookings      ToolName = "list_bookings"
	ToolCancelBooking     ToolName = "cancel_booking"
	ToolRescheduleBooking ToolName = "reschedule_booking"
)

// Status is what became of a booking, as a tool answers it.
type Status string

// Statuses of a BookingAnswer.
const (
	// StatusConfirmed: booked (and the deposit taken, if any).
	StatusConfirmed Status = "confirmed"
	// StatusPending: still running, waiting for the deposit, or under a
	// person's review; call get_booking with workflow_id later.
	StatusPending Status = "pending"
	// StatusNeedsConfirmation: the customer has another appointment close
	// to this one; ask them before booking a second (confirm_second).
	StatusNeedsConfirmation Status = "needs_confirmation"
	// StatusRejected: not booked (slot taken, deposit failed); nothing to
	// undo.
	StatusRejected Status = "rejected"
	// StatusAlreadyBooked: this booking existed before this operation
	// (another call, channel or the front desk made it); not booked twice.
	StatusAlreadyBooked Status = "already_booked"
	// StatusCancelled: the booking is cancelled (cancel_booking); the
	// message says whether the deposit was refunded or kept.
	StatusCancelled Status = "cancelled"
	// StatusNoShow: the customer did not come; the deposit was kept.
	StatusNoShow Status = "no_show"
	// StatusCompleted: the appointment has taken place.
	StatusCompleted Status = "completed"
	// StatusNotChanged: the booking was not changed (not cancellable, or
	// the tool is not available); the message says why.
	StatusNotChanged Status = "not_changed"
)

// ListServicesInput takes nothing: the tenant comes from the token.
type ListServicesInput struct{}

// ServiceInfo is one bookable service.
type ServiceInfo struct {
	ID              string   `json:"id" jsonschema:"the service ID the other tools take"`
	Name            string   `json:"name"`
	DurationMinutes int      `json:"duration_minutes"`
	DepositAmount   int64    `json:"deposit_amount" jsonschema:"deposit in minor units (1500 = 15.00); 0 = none"`
	Currency        string   `json:"currency,omitempty"`
	Resources       []string `json:"resources" jsonschema:"resource IDs that can do it"`
}

// ListServicesOutput is the tenant's catalogue.
type ListServicesOutput struct {
	Services []ServiceInfo `json:"services"`
	Timezone string        `json:"timezone" jsonschema:"IANA time zone of the business; times without offset mean this zone"`
}

// FindSlotsInput asks for free slots of a service.
type FindSlotsInput struct {
	Service    string `json:"service" jsonschema:"service ID from list_services"`
	From       string `json:"from,omitempty" jsonschema:"RFC 3339 start of the search window (default: now)"`
	To         string `json:"to,omitempty" jsonschema:"RFC 3339 end of the search window (default: from + 1 day; at most 14 days)"`
	When       string `json:"when,omitempty" jsonschema:"instead of from/to: a day as the customer said it, German or English (morgen, Dienstag, am 1.12., next Tuesday)"`
	ResourceID string `json:"resource_id,omitempty" jsonschema:"only this resource"`
}

// Slot is one free start.
type Slot struct {
	Start      string `json:"start" jsonschema:"RFC 3339, in the business time zone"`
	ResourceID string `json:"resource_id"`
}

// FindSlotsOutput lists free slots and a fresh operation for booking one.
type FindSlotsOutput struct {
	Slots []Slot `json:"slots"`
	OperationOutput
}

// BeginOperationInput takes nothing.
type BeginOperationInput struct{}

// OperationOutput is a server-issued operation: pass operation_id to
// book_appointment, and again unchanged on every retry of that booking.
type OperationOutput struct {
	OperationID         string `json:"operation_id" jsonschema:"signed by the server; pass it to book_appointment and reuse it on retries of that booking"`
	CapabilitiesVersion string `json:"capabilities_version" jsonschema:"the tool contract the operation was issued for"`
}

// BookInput asks for one appointment.
type BookInput struct {
	Customer      string `json:"customer" jsonschema:"the customer's phone number, E.164 (+4915112345678)"`
	Service       string `json:"service" jsonschema:"service ID from list_services"`
	Start         string `json:"start" jsonschema:"RFC 3339 start, or the slot as the customer said it (Dienstag 14 Uhr, tomorrow 2pm)"`
	OperationID   string `json:"operation_id,omitempty" jsonschema:"from begin_operation or find_slots; reuse it unchanged when retrying"`
	ConfirmSecond bool   `json:"confirm_second,omitempty" jsonschema:"true only after the customer confirmed they want a second appointment beside the one needs_confirmation named"`
}

// BookingAnswer is what a booking tool answers: the same for every call
// of one operation, so a retry learns exactly what the first call did.
type BookingAnswer struct {
	Status     Status `json:"status" jsonschema:"confirmed, pending, needs_confirmation, rejected, already_booked; for an earlier booking also cancelled, no_show or completed"`
	WorkflowID string `json:"workflow_id,omitempty" jsonschema:"the booking's handle: pass it to get_booking"`
	BookingID  string `json:"booking_id,omitempty" jsonschema:"the calendar's booking ID once booked"`
	Service    string `json:"service,omitempty"`
	Start      string `json:"start,omitempty" jsonschema:"RFC 3339, in the business time zone"`
	// PaymentURL is the deposit's payment link (link mode), to read out or
	// send; the customer was also sent it.
	PaymentURL string `json:"payment_url,omitempty" jsonschema:"payment link for the deposit: give it to the customer"`
	// ExistingBooking names the other appointment needs_confirmation or
	// already_booked is about (its workflow ID, or its booking ID).
	ExistingBooking string `json:"existing_booking,omitempty"`
	ExistingStart   string `json:"existing_start,omitempty"`
	OperationID     string `json:"operation_id,omitempty"`
	Message         string `json:"message" jsonschema:"what to tell the customer, and what to do next"`
	// merged: the intent was booked under another operation or channel.
	merged bool
	// operation and intentID are what the tool-call record names (a digest
	// of the operation ID, "intent" without one; the intent's hash).
	operation, intentID string
}

// GetBookingInput names a booking.
type GetBookingInput struct {
	ID string `json:"id" jsonschema:"workflow_id (appointment:…) or booking_id (bk_…)"`
}

// ListBookingsInput names a customer.
type ListBookingsInput struct {
	Customer string `json:"customer" jsonschema:"the customer's phone number, E.164"`
}

// ListBookingsOutput is a customer's upcoming appointments.
type ListBookingsOutput struct {
	Bookings []BookingAnswer `json:"bookings"`
}

// ChangeInput names a booking to cancel or move.
type ChangeInput struct {
	ID     string `json:"id" jsonschema:"workflow_id or booking_id"`
	Reason string `json:"reason,omitempty" jsonschema:"cancel_booking: why, in a few words (optional)"`
	Start  string `json:"start,omitempty" jsonschema:"reschedule_booking: the new start"`
}

// ChangeOutput is a change's answer: cancelled, pending (outcome not yet
// known: call cancel_booking again with the same id, it acts once) or
// not_changed.
type ChangeOutput struct {
	WorkflowID string `json:"workflow_id,omitempty"`
	Deposit    string `json:"deposit,omitempty"`
	Status     Status `json:"status"`
	Message    string `json:"message"`
}
