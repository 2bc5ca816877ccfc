package appointment

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/telemetry"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// act is a nil receiver used only to name activity methods.
var act *activities.Activities

// Workflow turns one booking intent into exactly one held and
// confirmed appointment, one captured deposit and one confirmation: hold
// the slot, authorise the deposit (package deposit), confirm the hold,
// capture, send the confirmation. Every undo is registered before its step
// and runs in reverse on failure or cancellation. The workflow ID is the
// business reference sent downstream with every call.
func Workflow(ctx workflow.Context, req Request) (State, error) {
	a := &appointment{req: req, tuning: req.Tuning.WithDefaults()}
	a.versions = Baseline.Take(ctx)
	a.saga.Versions = a.versions
	if err := a.setup(ctx); err != nil {
		return a.state, err
	}
	return a.run(ctx)
}

type appointment struct {
	req    Request
	tuning workflows.Tuning
	state  State
	saga   workflows.Saga
	// cancel receives the customer's cancellation; payments the child's reports.
	cancel   workflow.ReceiveChannel
	payments workflow.ReceiveChannel
	child    workflow.ChildWorkflowFuture
	info     *workflow.Info
	// childCase is a compensation_failed case the payment saga opened.
	childCase string
	// honourCancel: a cancel is checked after confirm and capture too, and
	// one after commit opens a review case (versionCancelUntilCommit).
	honourCancel bool
	// link: the deposit is paid through a payment link (deposit.VersionPaymentLink).
	link bool
	// cardAuth is the card's authorisation run inline (versionCardInline),
	// nil when a payment saga runs the deposit; reviewing tells the
	// waiting appointment that a person has its unknown outcome.
	cardAuth  workflow.Future
	reviewing workflow.Channel
	// slotEnd is the booked slot's end as the calendar reported it.
	slotEnd time.Time
	// versions answers the run's GetVersion calls (Baseline).
	versions workflows.Versions
}

func (a *appointment) setup(ctx workflow.Context) error {
	a.info = workflow.GetInfo(ctx)
	a.phase(ctx, telemetry.PhaseAppointmentStarted)
	a.state = State{Status: workflows.StatusRequested, Reference: a.info.WorkflowExecution.ID, Steps: []workflows.Step{}}
	a.cancel = workflow.GetSignalChannel(ctx, workflows.SignalCancel)
	a.payments = workflow.GetSignalChannel(ctx, deposit.SignalStatus)
	if err := workflow.SetQueryHandler(ctx, workflows.QueryStatus, func() (State, error) { return a.state, nil }); err != nil {
		return fmt.Errorf("register status query: %w", err)
	}
	return a.upsert(ctx, workflows.StatusRequested, "starting")
}

// outcome ends the saga in a final, visible state.
type outcome struct {
	status workflows.BookingStatus
	reason string
}

func (a *appointment) run(ctx workflow.Context) (State, error) {
	// The payment saga's last report arrives after the appointment has
	// what it needs; reading it keeps "unhandled signal" warnings away.
	defer func() {
		var late deposit.State
		for a.payments.ReceiveAsync(&late) {
		}
	}()
	if o := a.book(ctx); o != nil {
		return a.end(ctx, o), nil
	}
	a.confirmation(ctx)
	if a.state.MessageID != "" {
		a.phase(ctx, telemetry.PhaseConfirmationQueued)
	}
	forward := a.honourCancel && a.versions.GetVersion(ctx, versionForwardLateCancel, workflow.DefaultVersion, 1) >= 1
	if a.honourCancel && !forward {
		a.cancelAfterCommit(ctx)
	}
	if a.versions.GetVersion(ctx, versionBookingLifecycle, workflow.DefaultVersion, 1) >= 1 {
		a.startLifecycle(ctx)
	}
	if forward {
		// After the last wait: a cancel that lands while the workflow
		// completes fails the completion and is read here on the retry.
		a.forwardLateCancel(ctx)
	}
	return a.state, a.upsert(ctx, workflows.StatusConfirmed, "booked "+a.state.BookingID)
}

// book runs the steps up to the captured deposit; nil means committed.
func (a *appointment) book(ctx workflow.Context) *outcome {
	if a.cancelRequested() {
		return &outcome{workflows.StatusCancelled, "cancelled by the customer"}
	}
	a.link = a.req.DepositAmount > 0 && a.req.PaymentMethod == "" &&
		a.versions.GetVersion(ctx, deposit.VersionPaymentLink, workflow.DefaultVersion, 1) >= 1
	a.saga.Add("release hold", func(ctx workflow.Context) error { return a.release(ctx) })
	hold, o := a.holdSlot(ctx, "hold-slot")
	if o != nil {
		return o
	}
	a.state.HoldID = hold
	a.phase(ctx, telemetry.PhaseHold)
	if a.versions.Taken() {
		// Held lasts no longer than this workflow task: authorising,
		// confirming or an ending is published before anything waits.
		a.state.Status = workflows.StatusHeld
		workflow.SetCurrentDetails(ctx, "slot held")
	} else if err := a.upsert(ctx, workflows.StatusHeld, "slot held"); err != nil {
		return &outcome{workflows.StatusRejected, err.Error()}
	}
	inline := a.req.DepositAmount > 0 && !a.link &&
		a.versions.GetVersion(ctx, versionCardInline, workflow.DefaultVersion, 1) >= 1
	if a.req.DepositAmount > 0 {
		a.saga.Add("void deposit", func(ctx workflow.Context) error { return a.voidDeposit(ctx) })
		authorize := a.authorize
		if inline {
			authorize = a.authorizeCard
		}
		if o := authorize(ctx); o != nil {
			return o
		}
		a.phase(ctx, telemetry.PhaseAuthorisation)
	}
	if a.cancelRequested() {
		return &outcome{workflows.StatusCancelled, "cancelled by the customer"}
	}
	// Registered before confirming: a confirmation whose answer was lost
	// may have booked.
	a.saga.Add("cancel booking", func(ctx workflow.Context) error { return a.cancelBooking(ctx) })
	if o := a.confirm(ctx); o != nil {
		return o
	}
	a.phase(ctx, telemetry.PhaseConfirm)
	a.honourCancel = a.versions.GetVersion(ctx, versionCancelUntilCommit, workflow.DefaultVersion, 1) >= 1
	// A cancel that arrived while confirming: nothing is captured yet.
	if a.honourCancel && a.cancelRequested() {
		return &outcome{workflows.StatusCancelled, "cancelled by the customer"}
	}
	if a.req.DepositAmount > 0 {
		capture := a.capture
		if inline {
			capture = a.captureCard
		}
		if o := capture(ctx); o != nil {
			return o
		}
		a.phase(ctx, telemetry.PhaseCapture)
		// A cancel that arrived while capturing: the compensation refunds.
		if a.honourCancel && a.cancelRequested() {
			return &outcome{workflows.StatusCancelled, "cancelled by the customer"}
		}
	}
	a.saga.Clear() // committed: booked and paid
	return nil
}

// cancelRequested drains a pending cancellation without blocking.
func (a *appointment) cancelRequested() bool {
	var any bool
	return a.cancel.ReceiveAsync(&any)
}

func (a *appointment) fromError(err error) *outcome {
	switch {
	case temporal.IsCanceledError(err):
		return &outcome{workflows.StatusCancelled, "cancelled"}
	case workflows.ErrorType(err) == activities.ErrTypeSlotUnavailable:
		return &outcome{workflows.StatusRejected, "slot_unavailable"}
	case workflows.ErrorType(err) == activities.ErrTypeHoldExpired:
		return &outcome{workflows.StatusRejected, "hold_expired"}
	}
	return &outcome{workflows.StatusRejected, err.Error()}
}

// authorize starts the payment saga and waits for its report.
func (a *appointment) authorize(ctx workflow.Context) *outcome {
	if err := a.upsert(ctx, workflows.StatusAuthorizing, "authorising the deposit"); err != nil {
		return &outcome{workflows.StatusRejected, err.Error()}
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: deposit.WorkflowID(a.state.Reference),
		// Terminated with the appointment: the appointment's own
		// compensation voids the deposit by reference first.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_TERMINATE,
		StaticSummary:     fmt.Sprintf("Deposit %d %s for %s", a.req.DepositAmount, a.req.Currency, a.state.Reference),
	})
	a.child = workflow.ExecuteChildWorkflow(cctx, deposit.WorkflowName, a.paymentRequest(ctx))
	timer := workflow.NewTimer(ctx, a.authorizationTimeout())
	for {
		var report deposit.State
		var childDone, timedOut, cancelled bool
		var childErr error
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(a.payments, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &report) })
		sel.AddFuture(a.child, func(f workflow.Future) { childDone = true; childErr = f.Get(ctx, &report) })
		a.boundAuthorization(ctx, sel, timer, &timedOut, &cancelled)
		sel.Select(ctx)
		switch {
		case cancelled:
			return &outcome{workflows.StatusCancelled, "cancelled"}
		case timedOut:
			return &outcome{workflows.StatusPaymentFailed, "no authorisation in time"}
		}
		a.state.Payment, a.state.IntentID = report.Status, report.IntentID
		a.state.PaymentURL, a.state.PaymentExpiresAt = report.PaymentURL, report.PaymentExpiresAt
		switch report.Status {
		case deposit.Authorized:
			a.recordChild("authorize deposit (payment saga)", report)
			return nil
		case deposit.NeedsReview:
			a.show(ctx, workflows.StatusNeedsReview, "deposit outcome unknown: waiting for review")
			// A person decides now; give them the review's time.
			timer = workflow.NewTimer(ctx, a.tuning.ReviewTimeout+a.tuning.AuthorizationTimeout)
		case deposit.Expired:
			a.recordChild("authorize deposit (payment saga)", report)
			return &outcome{workflows.StatusPaymentFailed, deposit.ReasonLinkExpired}
		case deposit.Declined, deposit.Failed, deposit.Voided:
			a.noteChildCase(report)
			a.recordChild("authorize deposit (payment saga)", report)
			return &outcome{workflows.StatusPaymentFailed, report.Reason}
		default:
			if childDone && childErr != nil {
				return &outcome{workflows.StatusPaymentFailed, "payment saga failed: " + childErr.Error()}
			}
			if childDone {
				return &outcome{workflows.StatusPaymentFailed, "payment saga ended: " + string(report.Status)}
			}
		}
	}
}

// boundAuthorization adds what ends a wait for the deposit's
// authorisation to sel: its timer, the customer's cancel, the workflow's
// cancellation.
func (a *appointment) boundAuthorization(ctx workflow.Context, sel workflow.Selector, timer workflow.Future, timedOut, cancelled *bool) {
	sel.AddFuture(timer, func(f workflow.Future) {
		if f.Get(ctx, nil) != nil {
			*cancelled = true // the timer was cancelled with the workflow
		} else {
			*timedOut = true
		}
	})
	sel.AddReceive(a.cancel, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); *cancelled = true })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { *cancelled = true })
}

// capture tells the payment saga to capture and waits for it to finish.
func (a *appointment) capture(ctx workflow.Context) *outcome {
	if err := a.signalPayment(ctx, deposit.Capture); err != nil {
		return &outcome{workflows.StatusPaymentFailed, "signal capture: " + err.Error()}
	}
	var final deposit.State
	if err := a.child.Get(ctx, &final); err != nil {
		return a.fromError(err)
	}
	a.state.Payment = final.Status
	a.noteChildCase(final)
	if final.Status != deposit.Captured {
		return &outcome{workflows.StatusPaymentFailed, "deposit not captured: " + final.Reason}
	}
	a.recordChild("capture deposit (payment saga)", final)
	return nil
}

// versionPaymentSignalAfterReset: a run created by a reset signals the
// payment saga's execution when the child-only signal is refused.
const versionPaymentSignalAfterReset = "payment-signal-after-reset"

// signalPayment sends the payment saga the appointment's decision. In a
// run created by a reset the child still names the earlier run as its
// parent, so the server refuses a child-only signal from this run
// ("unknown external workflow execution"); a plain signal to the child's
// execution reaches it (its completion follows the reset chain on its own).
func (a *appointment) signalPayment(ctx workflow.Context, action deposit.Action) error {
	err := a.child.SignalChildWorkflow(ctx, deposit.SignalDecision, action).Get(ctx, nil)
	reset := a.info.WorkflowExecution.RunID != a.info.OriginalRunID
	if err == nil || !reset || a.versions.GetVersion(ctx, versionPaymentSignalAfterReset, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return err
	}
	var child workflow.Execution
	if err := a.child.GetChildWorkflowExecution().Get(ctx, &child); err != nil {
		return err
	}
	return workflow.SignalExternalWorkflow(ctx, child.ID, child.RunID, deposit.SignalDecision, action).Get(ctx, nil)
}

// recordChild copies the payment saga's last step into the status table.
func (a *appointment) recordChild(name string, p deposit.State) {
	// The saga's last step of that kind (after a decline the last step of
	// all is the child's own void).
	prefix := "authorize-deposit"
	if strings.HasPrefix(name, "capture") {
		prefix = "capture-deposit"
	}
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if strings.HasPrefix(p.Steps[i].ActivityID, prefix) {
			s := p.Steps[i]
			s.Name = name
			a.state.Steps = append(a.state.Steps, s)
			return
		}
	}
}

// upsert moves the status and publishes it to the Web UI (with the
// baseline, only what changes: the start's search attributes say
// Requested, the customer, channel, service and slot already).
func (a *appointment) upsert(ctx workflow.Context, status workflows.BookingStatus, details string) error {
	a.state.Status = status
	workflow.SetCurrentDetails(ctx, details)
	err := a.versions.Upsert(ctx, append(workflows.CustomerUpserts(ctx, a.versions, a.req.Customer, a.req.CustomerKey),
		workflows.BookingStatusKey.ValueSet(string(status)),
		workflows.ChannelKey.ValueSet(string(a.req.Channel)),
		workflows.ServiceKey.ValueSet(a.req.Service),
		workflows.SlotStartKey.ValueSet(a.req.SlotStart.UTC()),
	)...)
	if err != nil {
		return fmt.Errorf("upsert search attributes: %w", err)
	}
	return nil
}

// show is upsert where the saga goes on whatever the Web UI shows: the
// status is in the state (and the status query) either way, and a failed
// upsert is logged rather than dropped.
func (a *appointment) show(ctx workflow.Context, status workflows.BookingStatus, details string) {
	if err := a.upsert(ctx, status, details); err != nil {
		workflow.GetLogger(ctx).Warn("status not shown in the Web UI", "status", status, "error", err)
	}
}

// phase records that phase p of this booking ended (ObservePhase).
func (a *appointment) phase(ctx workflow.Context, p telemetry.Phase) {
	workflows.ObservePhase(ctx, a.req.Tenant, p, a.req.AcceptedAt)
}
