package lifecycle

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
)

// The life of a booking after its confirmation (docs/lifecycle.md). The
// AppointmentWorkflow ends at Confirmed as it always did; it then starts
// one lifecycle workflow per booking, which stays addressable until the slot
// has passed and takes the changes a customer or a member of staff asks
// for as Temporal Updates.

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

// Names of the Updates a booking takes; each answers the booking's
// State.
const (
	// UpdateCancel cancels a confirmed booking; input CancelRequest.
	UpdateCancel = "cancel"
	// UpdateReschedule moves a confirmed booking to another slot (hold
	// the new slot, confirm it, cancel the old one); input
	// RescheduleRequest. A taken slot fails the Update with an
	// application error of type activities.ErrTypeSlotUnavailable whose
	// details are a RescheduleRefused; the booking is untouched.
	UpdateReschedule = "reschedule"
	// UpdateNoShow marks a booking whose slot has begun as NoShow (staff
	// only); input NoShowRequest.
	UpdateNoShow = "no_show"
)

// RescheduleRequest is the input of the reschedule Update.
type RescheduleRequest struct {
	Start time.Time `json:"start"`
	// ResourceID asks for a resource; empty: any that offers the service.
	ResourceID string `json:"resource_id,omitempty"`
}

// RescheduleRefused is the detail of a reschedule refused because the new
// slot is taken: free slots nearby to offer instead.
type RescheduleRefused struct {
	Alternatives []time.Time `json:"alternatives"`
}

// NoShowRequest is the input of the no_show Update.
type NoShowRequest struct {
	Note string `json:"note,omitempty"`
}

// QueryLifecycle returns the booking's State.
const QueryLifecycle = "lifecycle"

// Defaults of a booking's policies when neither the tenant nor the input
// sets them.
const (
	// DefaultCancellationWindow: free cancellation until 24 h before the slot.
	DefaultCancellationWindow = 24 * time.Hour
	// DefaultLinger: how long a booking stays addressable after its slot,
	// so a late request gets a definite answer (Completed) instead of "no
	// such workflow".
	DefaultLinger = 24 * time.Hour
	// defaultSlotLength stands in for a slot end the calendar did not report.
	defaultSlotLength = time.Hour
)

// Input is the input of the lifecycle workflow: the confirmed booking
// as its appointment left it, and the tenant's policies at that moment.
type Input struct {
	Tenant string `json:"tenant"`
	// Reference is the appointment's workflow ID, the business reference
	// the calendar, the payment API and the outbox know the booking by.
	Reference  string            `json:"reference"`
	Customer   string            `json:"customer"`
	Service    string            `json:"service"`
	Channel    workflows.Channel `json:"channel"`
	BookingID  string            `json:"booking_id"`
	ResourceID string            `json:"resource_id,omitempty"`
	SlotStart  time.Time         `json:"slot_start"`
	SlotEnd    time.Time         `json:"slot_end,omitzero"`
	// Deposit is the captured deposit (minor units); 0: nothing to refund.
	Deposit  int64  `json:"deposit,omitempty"`
	Currency string `json:"currency,omitempty"`
	// IntentID is the deposit's payment intent; empty: found by reference.
	IntentID string         `json:"intent_id,omitempty"`
	Timezone string         `json:"timezone,omitempty"`
	Terms    *tenants.Terms `json:"terms,omitempty"`
	// CancellationWindow: a cancellation at least this long before the
	// slot refunds the deposit in full, a later one keeps it. Zero:
	// DefaultCancellationWindow.
	CancellationWindow workflows.Duration `json:"cancellation_window,omitempty"`
	// Reminders are offsets before the slot at which a reminder is sent;
	// empty: 24 h and 2 h (remind.go).
	Reminders []workflows.Duration `json:"reminders,omitempty"`
	// Linger: how long after the slot's end the booking stays addressable
	// as Completed. Zero: DefaultLinger.
	Linger workflows.Duration `json:"linger,omitempty"`
	Tuning workflows.Tuning   `json:"tuning,omitempty"`
}

// DepositOutcome says what a cancellation did with the deposit.
type DepositOutcome string

// Deposit outcomes of a cancellation.
const (
	DepositRefunded DepositOutcome = "refunded"
	DepositKept     DepositOutcome = "kept"
	DepositNone     DepositOutcome = "none"
)

// CancelRequest is the input of the cancel Update.
type CancelRequest struct {
	Reason string `json:"reason"`
	// OnlyIfRefunded asks the booking to refuse (ErrTypeDepositWouldBeKept,
	// before anything is recorded) a cancel that would keep the deposit:
	// the caller told the customer nothing about losing it and must ask
	// first. The booking's own window and clock decide, not the caller's.
	OnlyIfRefunded bool `json:"only_if_refunded,omitempty"`
	// RefundInFull refunds the deposit whatever the window: the customer
	// cancelled before the booking was confirmed to them, and was told the
	// unconfirmed booking is being cancelled (appointment/late_cancel.go).
	RefundInFull bool `json:"refund_in_full,omitempty"`
}

// maxCancelReason bounds the reason stored in the history.
const maxCancelReason = 500

// State is the booking's state: the lifecycle query's answer,
// every Update's answer and the workflow's result.
type State struct {
	Status    workflows.BookingStatus `json:"status"`
	Reference string                  `json:"reference"`
	BookingID string                  `json:"booking_id"`
	SlotStart time.Time               `json:"slot_start"`
	// Deposit, RefundID, CancelReason and CancelledAt describe the
	// cancellation, once there was one.
	Deposit      DepositOutcome `json:"deposit,omitempty"`
	RefundID     string         `json:"refund_id,omitempty"`
	CancelReason string         `json:"cancel_reason,omitempty"`
	CancelledAt  time.Time      `json:"cancelled_at,omitzero"`
	// CancelCase is the cancellation_request case of a cancel that came
	// while a change waited for a person (ReviewCase is that change's).
	CancelCase string `json:"cancel_case,omitempty"`
	// Reminders are the offsets whose reminder was sent ("24h0m0s").
	Reminders []string `json:"reminders,omitempty"`
	// MessageID is the cancellation message's outbox row.
	MessageID  string `json:"message_id,omitempty"`
	ReviewCase string `json:"review_case,omitempty"`
	// Reason says in words what the last change did (e.g. why the
	// deposit was kept).
	Reason string           `json:"reason,omitempty"`
	Steps  []workflows.Step `json:"steps"`
	// ResourceID is the calendar resource of the current booking (set by
	// a move; else the one the appointment asked for, if any).
	ResourceID string `json:"resource_id,omitempty"`
	// Service and Customer name what is booked for whom, so a caller that
	// moves the booking can look for a free slot.
	Service  string `json:"service,omitempty"`
	Customer string `json:"customer,omitempty"`
	// Moves are the reschedules carried out, oldest first.
	Moves []Move `json:"moves,omitempty"`
}

// WorkflowID is the lifecycle workflow's ID of the appointment
// appointmentID: derived, so any caller who knows the booking finds it.
func WorkflowID(appointmentID string) string {
	return activities.BookingWorkflowID(appointmentID)
}

// Workflow keeps a confirmed booking addressable until its slot has
// passed: it takes cancellations as Updates (each carried out once), ends
// Completed at the slot's end or Cancelled, and publishes BookingStatus
// and SlotStart on every change.
func Workflow(ctx workflow.Context, in Input) (State, error) {
	b := &booking{in: in, tuning: in.Tuning.WithDefaults()}
	b.versions = Baseline.Take(ctx)
	if err := b.setup(ctx); err != nil {
		return b.state, err
	}
	return b.run(ctx)
}

type booking struct {
	in     Input
	tuning workflows.Tuning
	state  State
	// cancelling is set while a cancel Update carries out its steps; a
	// second one waits for it and answers the same state.
	cancelling bool
	// reminding is set while a reminder is sent; a cancel waits for it.
	reminding bool
	// versions answers the run's GetVersion calls (Baseline).
	versions workflows.Versions
	// version is versionReschedule's: DefaultVersion runs keep fixed
	// timers and refuse a move.
	version workflow.Version
	// moving is set while a reschedule carries out its steps; a cancel or
	// another reschedule waits for it. attempts counts the reschedules
	// that reached the calendar (it names their activities).
	moving   bool
	attempts int
	// planned are the reminders still to send for the current slot;
	// replanned tells the run loop a move replaced them and the slot.
	planned   []reminder
	replanned bool
	// shopCal carries the booking into the shop's calendar (shopcal.go).
	shopCal shopCalendar
}

func (b *booking) setup(ctx workflow.Context) error {
	b.state = State{Status: workflows.StatusConfirmed, Reference: b.in.Reference, BookingID: b.in.BookingID, SlotStart: b.in.SlotStart, Steps: []workflows.Step{},
		ResourceID: b.in.ResourceID, Service: b.in.Service, Customer: b.in.Customer}
	b.version = b.versions.GetVersion(ctx, versionReschedule, workflow.DefaultVersion, 1)
	// Published before any handler is registered: an Update waiting in
	// the first workflow task runs as its handler is registered, and a
	// cancel's Cancelling must not be overwritten by "booked" after it.
	bookedFirst := b.versions.GetVersion(ctx, versionPublishBookedFirst, workflow.DefaultVersion, 1) >= 1
	if bookedFirst {
		if err := b.upsert(ctx, workflows.StatusConfirmed, "booked "+b.in.BookingID); err != nil {
			return err
		}
	}
	b.startShopCalendar(ctx)
	if err := workflow.SetQueryHandler(ctx, QueryLifecycle, func() (State, error) { return b.state, nil }); err != nil {
		return fmt.Errorf("register lifecycle query: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCancel, b.cancel, workflow.UpdateHandlerOptions{
		Validator: b.validateCancel,
	}); err != nil {
		return fmt.Errorf("register cancel update: %w", err)
	}
	if err := b.setupStaff(ctx); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateReschedule, b.reschedule, workflow.UpdateHandlerOptions{
		Validator: b.validateReschedule,
	}); err != nil {
		return fmt.Errorf("register reschedule update: %w", err)
	}
	if bookedFirst {
		return nil
	}
	return b.upsert(ctx, workflows.StatusConfirmed, "booked "+b.in.BookingID)
}

// versionPublishBookedFirst: the booking publishes Confirmed before it
// registers its Update handlers. Before, a cancel delivered with the
// workflow's first task ran as its handler was registered, published
// Cancelling, and the setup's "booked" then published Confirmed over it
// (and set the state back to Confirmed) while the cancel went on: a wish
// for the same slot was merged into a booking about to end.
const versionPublishBookedFirst = "publish-booked-first"

// run sends the reminders and waits for the slot's end (durable timers;
// Updates are handled meanwhile), then stays addressable for the linger
// time and ends.
func (b *booking) run(ctx workflow.Context) (State, error) {
	if b.version != workflow.DefaultVersion {
		return b.runReplannable(ctx)
	}
	for _, r := range b.plan(workflow.Now(ctx)) {
		if err := b.sleepUntil(ctx, r.at); err != nil {
			return b.state, err
		}
		b.remind(ctx, r)
	}
	if err := b.sleepUntil(ctx, b.slotEnd()); err != nil {
		return b.state, err
	}
	// A cancel accepted before the end finishes first.
	if err := workflow.Await(ctx, func() bool { return !b.cancelling }); err != nil {
		return b.state, err
	}
	return b.complete(ctx)
}

// complete marks a booking whose slot has passed Completed, stays
// addressable for the linger time and ends.
func (b *booking) complete(ctx workflow.Context) (State, error) {
	if b.state.Status == workflows.StatusConfirmed {
		if err := b.upsert(ctx, workflows.StatusCompleted, "the slot has passed"); err != nil {
			return b.state, err
		}
	}
	if err := b.sleepUntil(ctx, b.slotEnd().Add(b.linger())); err != nil {
		return b.state, err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && b.shopCalendarDone() }); err != nil {
		return b.state, err
	}
	return b.state, nil
}

// sleepUntil waits on a durable timer until t in workflow time.
func (b *booking) sleepUntil(ctx workflow.Context, t time.Time) error {
	if d := t.Sub(workflow.Now(ctx)); d > 0 {
		if err := workflow.Sleep(ctx, d); err != nil {
			return fmt.Errorf("wait until %s: %w", t.UTC().Format(time.RFC3339), err)
		}
	}
	return nil
}

func (b *booking) slotEnd() time.Time {
	if b.in.SlotEnd.After(b.in.SlotStart) {
		return b.in.SlotEnd
	}
	return b.in.SlotStart.Add(defaultSlotLength)
}

func (b *booking) linger() time.Duration {
	if b.in.Linger > 0 {
		return b.in.Linger
	}
	return DefaultLinger
}

// upsert moves the status and publishes it (and the slot) to the Web UI;
// with the baseline only a change (StartAttributes say Confirmed and the
// slot already).
func (b *booking) upsert(ctx workflow.Context, status workflows.BookingStatus, details string) error {
	b.state.Status = status
	workflow.SetCurrentDetails(ctx, details)
	err := b.versions.Upsert(ctx,
		workflows.BookingStatusKey.ValueSet(string(status)),
		workflows.SlotStartKey.ValueSet(b.in.SlotStart.UTC()),
	)
	if err != nil {
		return fmt.Errorf("upsert search attributes: %w", err)
	}
	return nil
}

// record adds a step to the booking's table, with the key it sent.
func (b *booking) record(ctx workflow.Context, name, activityID string, s activities.Step, err error) {
	b.state.Steps = append(b.state.Steps, workflows.KeyedStep(workflow.GetInfo(ctx), name, activityID, s, err))
}
