package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows"
)

// NewReconciler wires the reconciler's activities to the same APIs and
// review queue as the sagas' (acts), and to Temporal for "is the saga
// still running?".
func NewReconciler(acts *activities.Activities, tc client.Client) *activities.Reconciler {
	return &activities.Reconciler{Calendar: acts.Calendar, Payments: acts.Payments, Reviews: acts.Reviews, Temporal: tc}
}

// RegisterReconciler adds the reconciler's workflow and activities.
func RegisterReconciler(r worker.Registry, rc *activities.Reconciler) {
	r.RegisterWorkflow(workflows.ReconcilerWorkflow)
	r.RegisterActivity(rc)
}

// ReconcileInput is the sweep the schedule starts: every configured
// tenant, with the configured grace period.
func ReconcileInput(cfg config.Config) workflows.ReconcileInput {
	return workflows.ReconcileInput{Tenants: cfg.Tenants(), Grace: cfg.ReconcileGrace}
}

// EnsureReconcileSchedule creates the Temporal Schedule that starts
// ReconcilerWorkflow every RECONCILE_INTERVAL, or brings an existing one
// in line with this worker's configuration (interval, tenants, grace): the
// configuration is the truth, so a tenant added later is swept too.
// Every worker calls it at start. Overlapping sweeps are skipped.
func EnsureReconcileSchedule(ctx context.Context, tc client.Client, cfg config.Config, log *slog.Logger) error {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: cfg.ReconcileInterval}}}
	action := &client.ScheduleWorkflowAction{
		ID: "reconciler", Workflow: workflows.ReconcilerWorkflow, Args: []any{ReconcileInput(cfg)},
		TaskQueue: cfg.TaskQueue,
	}
	_, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: workflows.ReconcilerScheduleID, Spec: spec, Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, Action: action,
		Note: "bookonce: repair holds, bookings and authorisations whose saga ended without settling them (docs/reconciler.md)",
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		err = tc.ScheduleClient().GetHandle(ctx, workflows.ReconcilerScheduleID).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				sched := in.Description.Schedule
				sched.Spec, sched.Action = &spec, action
				return &client.ScheduleUpdate{Schedule: &sched}, nil
			},
		})
		if err != nil {
			return fmt.Errorf("update schedule %s: %w", workflows.ReconcilerScheduleID, err)
		}
		log.Debug("reconciler schedule updated", "schedule", workflows.ReconcilerScheduleID, "every", cfg.ReconcileInterval)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", workflows.ReconcilerScheduleID, err)
	}
	log.Info("reconciler schedule created", "schedule", workflows.ReconcilerScheduleID, "every", cfg.ReconcileInterval)
	return nil
}
