package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
)

// ReconcilerScheduleID is the Temporal Schedule that starts
// ReconcilerWorkflow every RECONCILE_INTERVAL.
const ReconcilerScheduleID = "bookonce-reconciler"

// DefaultReconcileLookback bounds a sweep to effects of the last day:
// Temporal's shortest namespace retention, so a saga the sweep looks for
// has not been deleted by retention yet.
const DefaultReconcileLookback = 24 * time.Hour

// ReconcileInput is one sweep over tenants.
type ReconcileInput struct {
	Tenants []string `json:"tenants"`
	// Grace leaves effects alone that are younger, or whose saga closed
	// more recently (zero: none; the schedule passes RECONCILE_GRACE).
	Grace Duration `json:"grace"`
	// Lookback: zero is DefaultReconcileLookback.
	Lookback Duration `json:"lookback,omitempty"`
	// Tuning shortens timeouts and retries (tests).
	Tuning Tuning `json:"tuning,omitempty"`
}

// ReconcileResult says what one sweep did.
type ReconcileResult struct {
	// Repairs counts effects repaired, by kind (activities.Repair*).
	Repairs map[string]int `json:"repairs"`
	// Unchanged counts orphans a repair found settled meanwhile.
	Unchanged int `json:"unchanged"`
	// Skipped counts references whose saga runs or closed too recently.
	Skipped int `json:"skipped"`
	// Failed lists repairs that did not succeed; the next sweep finds
	// those effects again.
	Failed []string `json:"failed,omitempty"`
}

// rec is a nil receiver used only to name the reconciler's activities.
var rec *activities.Reconciler

// ReconcilerWorkflow finds holds, bookings and authorisations whose
// appointment saga ended (terminated, timed out, or missing) without
// settling them, and releases, voids, cancels, or opens a review case
// (see docs/reconciler.md). Every downstream call carries a key derived
// from this run's activity executions; the effect's business reference
// finds it, so a second sweep finds nothing left to do.
func ReconcilerWorkflow(ctx workflow.Context, in ReconcileInput) (ReconcileResult, error) {
	r := &reconciler{in: in}
	r.setup()
	return r.run(ctx)
}

type reconciler struct {
	in     ReconcileInput
	tuning Tuning
	result ReconcileResult
}

func (r *reconciler) setup() {
	r.tuning = r.in.Tuning.withDefaults()
	if r.in.Lookback <= 0 {
		r.in.Lookback = DefaultReconcileLookback
	}
	r.result = ReconcileResult{Repairs: map[string]int{}}
}

func (r *reconciler) run(ctx workflow.Context) (ReconcileResult, error) {
	log := workflow.GetLogger(ctx)
	for _, tenant := range r.in.Tenants {
		shape := activities.SagaShape{
			ReferencePrefix: AppointmentWorkflowID(tenant, ""), ChildPrefix: PaymentWorkflowID(""),
			StatusAttribute: BookingStatusKey.GetName(), Confirmed: string(StatusConfirmed), NeedsReview: string(StatusNeedsReview),
		}
		var found activities.SweepResult
		err := workflow.ExecuteActivity(r.sweepCtx(ctx, "find-orphans/"+tenant), rec.FindOrphans, activities.SweepInput{
			Tenant: tenant, Shape: shape, Grace: r.in.Grace, Lookback: r.in.Lookback,
		}).Get(ctx, &found)
		if err != nil {
			r.result.Failed = append(r.result.Failed, fmt.Sprintf("sweep %s: %v", tenant, err))
			continue
		}
		r.result.Skipped += found.Skipped
		for _, o := range found.Orphans {
			r.repair(ctx, tenant, shape, o)
		}
	}
	if len(r.result.Failed) > 0 {
		log.Warn("reconciler: repairs failed; the next sweep tries again", "failed", r.result.Failed)
		return r.result, temporal.NewApplicationError(fmt.Sprintf("%d repair(s) failed", len(r.result.Failed)), "ReconcileIncomplete", r.result)
	}
	return r.result, nil
}

// repair runs one repair under an activity ID naming the kind and the
// object, so its key (and the Web UI) say what it was for.
func (r *reconciler) repair(ctx workflow.Context, tenant string, shape activities.SagaShape, o activities.Orphan) {
	id := "repair/" + o.Kind + "/" + o.Reference
	if o.ObjectID != "" {
		id += "/" + o.ObjectID
	}
	var res activities.RepairResult
	err := workflow.ExecuteActivity(activityCtx(ctx, r.tuning, id, o.Kind+": "+o.Why), rec.RepairOrphan,
		activities.RepairInput{Tenant: tenant, Shape: shape, Orphan: o}).Get(ctx, &res)
	switch {
	case err != nil:
		r.result.Failed = append(r.result.Failed, fmt.Sprintf("%s: %v", id, err))
	case res.Repaired:
		r.result.Repairs[o.Kind]++
	default:
		r.result.Unchanged++
	}
}

// sweepCtx gives the listing more time than one step of a saga: it pages
// through a day of reservations and asks Temporal about each reference.
func (r *reconciler) sweepCtx(ctx workflow.Context, id string) workflow.Context {
	ctx = activityCtx(ctx, r.tuning, id, "Find effects whose saga ended without settling them")
	return workflow.WithStartToCloseTimeout(ctx, 5*time.Minute)
}
