package reconciler

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

// rec is a nil receiver used only to name the reconciler's activities.
var rec *activities.Reconciler

// Workflow finds holds, bookings and authorisations whose
// appointment saga ended (terminated, timed out, or missing) without
// settling them, and releases, voids, cancels, or opens a review case
// (see docs/reconciler.md). Every downstream call carries a key derived
// from this run's activity executions; the effect's business reference
// finds it, so a second sweep finds nothing left to do.
func Workflow(ctx workflow.Context, in Input) (Result, error) {
	r := &reconciler{in: in}
	r.setup()
	return r.run(ctx)
}

type reconciler struct {
	in     Input
	tuning workflows.Tuning
	result Result
}

func (r *reconciler) setup() {
	r.tuning = r.in.Tuning.WithDefaults()
	if r.in.Lookback <= 0 {
		r.in.Lookback = DefaultLookback
	}
	r.result = Result{Repairs: map[string]int{}}
}

func (r *reconciler) run(ctx workflow.Context) (Result, error) {
	log := workflow.GetLogger(ctx)
	tenants, err := r.tenants(ctx)
	if err != nil {
		return r.result, err
	}
	for _, tenant := range tenants {
		shape := activities.SagaShape{
			ReferencePrefix: appointment.WorkflowID(tenant, ""), ChildPrefix: deposit.WorkflowID(""),
			StatusAttribute: workflows.BookingStatusKey.GetName(), Confirmed: string(workflows.StatusConfirmed), NeedsReview: string(workflows.StatusNeedsReview),
		}
		var found activities.SweepResult
		err := workflow.ExecuteActivity(r.sweepCtx(ctx, "find-orphans/"+tenant), rec.FindOrphans, activities.SweepInput{
			Tenant: tenant, Shape: shape, Grace: r.in.Grace, Lookback: r.in.Lookback,
		}).Get(ctx, &found)
		if err != nil {
			r.result.Failed = append(r.result.Failed, fmt.Sprintf("sweep %s: %v", tenant, err))
			continue
		}
		r.result.Skipped, r.result.Settled = r.result.Skipped+found.Skipped, r.result.Settled+found.Settled
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

// tenants are the tenants this sweep covers: the input's, or (AllTenants)
// those there are now. A sweep started before AllTenants existed has it
// false and replays as it ran.
func (r *reconciler) tenants(ctx workflow.Context) ([]string, error) {
	if !r.in.AllTenants {
		return r.in.Tenants, nil
	}
	var ids []string
	err := workflow.ExecuteActivity(r.sweepCtx(ctx, "list-tenants"), rec.ListTenants).Get(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return ids, nil
}

// repair runs one repair under an activity ID naming the kind and the
// object, so its key (and the Web UI) say what it was for.
func (r *reconciler) repair(ctx workflow.Context, tenant string, shape activities.SagaShape, o activities.Orphan) {
	id := "repair/" + o.Kind + "/" + o.Reference
	if o.ObjectID != "" {
		id += "/" + o.ObjectID
	}
	var res activities.RepairResult
	err := workflow.ExecuteActivity(workflows.ActivityCtx(ctx, r.tuning, id, o.Kind+": "+o.Why), rec.RepairOrphan,
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
// It heartbeats per reference, so a worker killed mid-sweep is noticed
// within sweepHeartbeat and the listing runs again on another.
func (r *reconciler) sweepCtx(ctx workflow.Context, id string) workflow.Context {
	ctx = workflows.ActivityCtx(ctx, r.tuning, id, "Find effects whose saga ended without settling them")
	ctx = workflow.WithHeartbeatTimeout(ctx, sweepHeartbeat)
	return workflow.WithStartToCloseTimeout(ctx, 5*time.Minute)
}

// sweepHeartbeat bounds the silence of a listing between two references
// (one Temporal describe, a payment lookup or two).
const sweepHeartbeat = 30 * time.Second
