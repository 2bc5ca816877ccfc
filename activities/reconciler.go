package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/review"
)

// Repair kinds: what the reconciler does about an orphaned effect, and the
// kind label of bookonce_reconciler_repairs_total.
const (
	RepairReleaseHold       = "release_hold"
	RepairVoidAuthorisation = "void_authorisation"
	RepairCancelBooking     = "cancel_booking"
	RepairRefundDeposit     = "refund_deposit"
	RepairReview            = "review"
)

// ErrTypeNotRepairable: the effect changed under the reconciler (a void of
// an intent that was captured meanwhile); the next sweep looks again.
const ErrTypeNotRepairable = "NotRepairable"

// WorkflowDescriber is the part of the Temporal client the reconciler
// needs: is the saga behind a business reference still running? It lists
// the sagas that settled for good, and describes the others one by one.
type WorkflowDescriber interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
	ListWorkflow(ctx context.Context, request *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// Reconciler holds the clients of the reconciler's activities: they find
// holds, bookings and authorisations whose saga ended (terminated, timed
// out, or missing) without deciding them, and undo them by reference.
type Reconciler struct {
	// Calendar returns the calendar client of a tenant.
	Calendar func(tenant string) (*calendar.Client, error)
	// Payments returns the payment gateway of a tenant; it must also be a
	// payments.AuthorisationLister.
	Payments func(tenant string) (payments.Gateway, error)
	// Reviews is the human review queue.
	Reviews *review.Store
	// Temporal describes workflows.
	Temporal WorkflowDescriber
	// TenantIDs lists the tenants there are now (the tenants registry), for
	// a sweep over all of them (ListTenants).
	TenantIDs func() []string
	// Now reads the clock for the sweep's window only (never for a key);
	// nil is time.Now.
	Now func() time.Time
}

// SagaShape names what the reconciler must know about the sagas without
// importing them (package workflows imports this one).
type SagaShape struct {
	// ReferencePrefix selects the references sagas own, e.g.
	// "appointment:demo:"; a front-desk booking under any other reference
	// is never touched.
	ReferencePrefix string `json:"reference_prefix"`
	// ChildPrefix + reference is the payment saga's workflow ID; while it
	// runs it settles the authorisation itself.
	ChildPrefix string `json:"child_prefix"`
	// StatusAttribute and Confirmed: the search attribute holding the
	// booking state and its value once the saga confirmed.
	StatusAttribute string `json:"status_attribute"`
	Confirmed       string `json:"confirmed"`
	// NeedsReview is the state of a saga a person settles: its captured
	// deposit is theirs to decide, never refunded by the sweep.
	NeedsReview string `json:"needs_review,omitempty"`
}

// SweepInput asks for the orphans of one tenant.
type SweepInput struct {
	Tenant string    `json:"tenant"`
	Shape  SagaShape `json:"shape"`
	// Grace: an effect younger than this, or of a saga closed more
	// recently, is left alone.
	Grace time.Duration `json:"grace"`
	// Lookback bounds the sweep to effects created since then; it must
	// not exceed the namespace's retention, or a saga deleted by retention
	// would look missing.
	Lookback time.Duration `json:"lookback"`
}

// Orphan is one effect to repair (or a reference to review).
type Orphan struct {
	Reference string `json:"reference"`
	Kind      string `json:"kind"`
	// ObjectID is the hold, booking or payment intent; empty for a review.
	ObjectID string `json:"object_id,omitempty"`
	// Why the reconciler decided so, for the log and the review case.
	Why string `json:"why"`
}

// SweepResult lists the orphans, in a stable order.
type SweepResult struct {
	Orphans []Orphan `json:"orphans"`
	// Skipped counts references left alone (saga running, or too fresh).
	Skipped int `json:"skipped"`
	// Settled counts references left alone because the listing showed
	// their saga completed as confirmed: none of them was described.
	Settled int `json:"settled"`
}

// suspects are the live effects of one reference.
type suspects struct {
	holds, bookings []calendar.Hold
	intents         []payments.Intent
	// captured are deposits taken and not fully refunded.
	captured []payments.Intent
}

// ListTenants returns the tenants there are now, sorted, so a sweep
// covers a shop applied since the worker started.
func (r *Reconciler) ListTenants(context.Context) ([]string, error) {
	if r.TenantIDs == nil {
		return nil, temporal.NewNonRetryableApplicationError("the reconciler has no tenants registry", "NoTenantsRegistry", nil)
	}
	ids := r.TenantIDs()
	sort.Strings(ids)
	return ids, nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// FindOrphans lists live holds, confirmed bookings and live
// authorisations of the tenant's sagas created within the window, and
// decides, per reference whose saga is closed or missing without being
// confirmed, what must be undone. It changes nothing.
func (r *Reconciler) FindOrphans(ctx context.Context, in SweepInput) (SweepResult, error) {
	by, err := r.listSuspects(ctx, in)
	if err != nil {
		return SweepResult{}, err
	}
	settled, err := r.settledSagas(ctx, in.Shape, r.now().Add(-in.Lookback))
	if err != nil {
		return SweepResult{}, err
	}
	refs := make([]string, 0, len(by))
	for ref := range by {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	var out SweepResult
	for i, ref := range refs {
		alive(ctx, i)
		if settled[reference.SagaOf(ref)] {
			out.Settled++
			continue
		}
		st, err := r.sagaState(ctx, in.Shape, ref)
		if err != nil {
			return SweepResult{}, err
		}
		if !st.orphaned(r.now().Add(-in.Grace)) {
			out.Skipped++
			continue
		}
		orphans, err := r.decide(ctx, in, ref, st, by[ref])
		if err != nil {
			return SweepResult{}, err
		}
		out.Orphans = append(out.Orphans, orphans...)
	}
	return out, nil
}

// alive heartbeats a sweep's progress: a worker that dies mid-sweep is
// noticed within the sweep's heartbeat timeout, not its five minutes, and
// the sweep (pinned to its build) does not hold that build's workers.
func alive(ctx context.Context, progress int) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, progress)
	}
}

func (r *Reconciler) listSuspects(ctx context.Context, in SweepInput) (map[string]*suspects, error) {
	cal, g, err := r.clients(in.Tenant)
	if err != nil {
		return nil, err
	}
	lister, ok := g.(payments.AuthorisationLister)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("the payment gateway cannot list authorisations", ErrTypePaymentFinal, nil)
	}
	from, to := r.now().Add(-in.Lookback), r.now().Add(-in.Grace)
	held, err := cal.Reservations(ctx, calendar.HoldHeld, from, to)
	if err != nil {
		return nil, calendarError("list held holds", err)
	}
	alive(ctx, 0)
	booked, err := cal.Reservations(ctx, calendar.HoldConfirmed, from, to)
	if err != nil {
		return nil, calendarError("list bookings", err)
	}
	alive(ctx, 0)
	auths, err := lister.LiveAuthorisations(ctx)
	if err != nil {
		return nil, paymentError("list authorisations", err)
	}
	alive(ctx, 0)
	captured, err := lister.CapturedSince(ctx, from)
	if err != nil {
		return nil, paymentError("list captured deposits", err)
	}
	by := map[string]*suspects{}
	of := func(ref string) *suspects {
		if by[ref] == nil {
			by[ref] = &suspects{}
		}
		return by[ref]
	}
	// Grouped by the saga, not the raw reference: a booking its lifecycle
	// moved sits under "<saga>#move-n" while its deposit stays under the
	// saga's own reference; apart, the deposit looked like money without
	// a booking and was refunded while the booking stood.
	for _, h := range held {
		if h.Status == calendar.HoldHeld && strings.HasPrefix(h.Reference, in.Shape.ReferencePrefix) {
			saga := of(reference.SagaOf(h.Reference))
			saga.holds = append(saga.holds, h)
		}
	}
	for _, b := range booked {
		if strings.HasPrefix(b.Reference, in.Shape.ReferencePrefix) {
			saga := of(reference.SagaOf(b.Reference))
			saga.bookings = append(saga.bookings, b)
		}
	}
	ours := func(pi payments.Intent) bool {
		return pi.Step == DepositStep && strings.HasPrefix(pi.Reference, in.Shape.ReferencePrefix) && !pi.Created.Before(from) && pi.Created.Before(to)
	}
	for _, pi := range auths {
		if ours(pi) {
			saga := of(reference.SagaOf(pi.Reference))
			saga.intents = append(saga.intents, pi)
		}
	}
	for _, pi := range captured {
		if ours(pi) && pi.AmountRefunded < pi.AmountCaptured {
			saga := of(reference.SagaOf(pi.Reference))
			saga.captured = append(saga.captured, pi)
		}
	}
	return by, nil
}

// decide turns one orphaned reference's effects into repairs. The rule,
// conservative about money: no money moves without the saga's decision
// (an authorisation is voided, never captured); a booking whose deposit
// was only authorised or voided is cancelled, as the saga's own
// compensation would have (the saga confirms to the customer only after
// the capture); a booking whose deposit was captured, that had no deposit,
// whose deposit cannot be told, or whose saga is missing altogether goes
// to a person, because undoing it alone could take away an appointment
// the customer was told about.
func (r *Reconciler) decide(ctx context.Context, in SweepInput, ref string, st sagaState, s *suspects) ([]Orphan, error) {
	var out []Orphan
	for _, h := range s.holds {
		out = append(out, Orphan{Reference: ref, Kind: RepairReleaseHold, ObjectID: h.ID, Why: "live hold of a saga that " + st.String()})
	}
	needsPerson := ""
	if len(s.bookings) > 0 {
		deposit, err := r.deposit(ctx, in.Tenant, ref, s)
		if err != nil {
			return nil, err
		}
		switch {
		case st.missing:
			needsPerson = "confirmed booking of a saga that no longer exists (deposit " + deposit + ")"
		case deposit == payments.StatusSucceeded:
			needsPerson = "confirmed booking with a captured deposit of a saga that " + st.String() + " before confirming it to the customer"
		case deposit == depositNone || deposit == depositUnknown:
			// No deposit means nothing stood between the confirmation and
			// the customer: they may have been told. An unknown deposit
			// (a search that lags) may be captured money.
			needsPerson = "confirmed booking of a saga that " + st.String() + " (deposit " + deposit + ")"
		default:
			for _, b := range s.bookings {
				out = append(out, Orphan{Reference: ref, Kind: RepairCancelBooking, ObjectID: b.BookingID,
					Why: "booking without a captured deposit (deposit " + deposit + ") of a saga that " + st.String()})
			}
		}
	}
	for _, pi := range s.intents {
		out = append(out, Orphan{Reference: ref, Kind: RepairVoidAuthorisation, ObjectID: pi.ID, Why: "live authorisation of a saga that " + st.String()})
	}
	refunds, why := capturedOrphans(in.Shape, ref, st, s)
	out = append(out, refunds...)
	if needsPerson == "" {
		needsPerson = why
	}
	if needsPerson != "" {
		exists, err := r.Reviews.HasCase(ctx, in.Tenant, ref, review.ReasonOrphanedEffect)
		if err != nil {
			return nil, fmt.Errorf("reconcile %s: %w", ref, err)
		}
		if !exists {
			out = append(out, Orphan{Reference: ref, Kind: RepairReview, Why: needsPerson})
		}
	}
	return out, nil
}

// Deposit states beyond the payment API's: none (the lookup proves there
// is no intent) and unknown (the lookup found nothing but lags, as
// Stripe's search does, so a captured deposit may exist).
const (
	depositNone    = "none"
	depositUnknown = "unknown"
)

// deposit is the state of the booking's deposit: a live authorisation
// listed, or the intent found by reference (depositNone, depositUnknown).
func (r *Reconciler) deposit(ctx context.Context, tenant, ref string, s *suspects) (string, error) {
	if len(s.intents) > 0 {
		return payments.StatusRequiresCapture, nil
	}
	_, g, err := r.clients(tenant)
	if err != nil {
		return "", err
	}
	pi, found, err := g.FindByReference(ctx, ref, DepositStep)
	if err != nil {
		return "", paymentError("find deposit", err)
	}
	switch {
	case !found && g.AuthoritativeLookup():
		return depositNone, nil
	case !found:
		return depositUnknown, nil
	}
	return pi.Status, nil
}

func (r *Reconciler) clients(tenant string) (*calendar.Client, payments.Gateway, error) {
	cal, err := r.Calendar(tenant)
	if err != nil {
		return nil, nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeCalendarFinal, err)
	}
	g, err := r.Payments(tenant)
	if err != nil {
		return nil, nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePaymentFinal, err)
	}
	return cal, g, nil
}

// sagaState is what Temporal says about the saga of a reference.
type sagaState struct {
	missing, running, confirmed bool
	status                      enumspb.WorkflowExecutionStatus
	closedAt                    time.Time
	// booking is the state a completed saga published last.
	booking string
}

// orphaned: the saga will not settle its effects any more, and it closed
// (or its effects were created, for a missing saga: the listing window
// ensures that) before the grace period.
func (s sagaState) orphaned(graceEnd time.Time) bool {
	switch {
	case s.missing:
		return true
	case s.running, s.confirmed:
		return false
	}
	return s.closedAt.Before(graceEnd)
}

func (s sagaState) String() string {
	if s.missing {
		return "does not exist"
	}
	return "closed as " + strings.ToLower(strings.TrimPrefix(s.status.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// sagaState describes the appointment workflow of ref (its latest run: a
// new run of the same ID owns the effects again) and its payment child.
// A move's reference is the appointment's: a confirmed appointment owns
// the bookings its lifecycle moved.
func (r *Reconciler) sagaState(ctx context.Context, shape SagaShape, ref string) (sagaState, error) {
	ref = reference.SagaOf(ref)
	st, err := r.describe(ctx, shape, ref)
	if err != nil || st.running || st.confirmed {
		return st, err
	}
	child, err := r.describe(ctx, shape, shape.ChildPrefix+ref)
	if err != nil {
		return sagaState{}, err
	}
	// A payment saga that outlived its appointment still voids by itself.
	st.running = child.running
	return st, nil
}

func (r *Reconciler) describe(ctx context.Context, shape SagaShape, id string) (sagaState, error) {
	resp, err := r.Temporal.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return sagaState{missing: true}, nil
	}
	if err != nil {
		return sagaState{}, fmt.Errorf("describe workflow %s: %w", id, err)
	}
	info := resp.GetWorkflowExecutionInfo()
	st := sagaState{status: info.GetStatus(), running: info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}
	if info.GetCloseTime() != nil {
		st.closedAt = info.GetCloseTime().AsTime()
	}
	if p := info.GetSearchAttributes().GetIndexedFields()[shape.StatusAttribute]; p != nil && st.status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		var status string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &status); err != nil {
			return sagaState{}, fmt.Errorf("decode %s of %s: %w", shape.StatusAttribute, id, err)
		}
		st.confirmed, st.booking = status == shape.Confirmed, status
	}
	return st, nil
}

// orphanDetails is the review case's details.
func orphanDetails(o Orphan) json.RawMessage {
	b, err := json.Marshal(map[string]string{"reference": o.Reference, "why": o.Why, "found_by": "reconciler"})
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
