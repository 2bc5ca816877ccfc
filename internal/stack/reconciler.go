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
// ReconcilerWorkflow every RECONCILE_INTERVAL. Every worker calls it at
// start; a schedule that exists already is kept as it is (change its
// interval with `temporal schedule update` or delete it to have the next
// worker create it afresh). Overlapping sweeps are skipped.
func EnsureReconcileSchedule(ctx context.Context, tc client.Client, cfg config.Config, log *slog.Logger) error {
	_, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      workflows.ReconcilerScheduleID,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: cfg.ReconcileInterval}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{
			ID: "reconciler", Workflow: workflows.ReconcilerWorkflow, Args: []any{ReconcileInput(cfg)},
			TaskQueue: cfg.TaskQueue,
		},
		Note: "bookonce: repair holds, bookings and authorisations whose saga ended without settling them (docs/reconciler.md)",
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		log.Debug("reconciler schedule exists", "schedule", workflows.ReconcilerScheduleID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", workflows.ReconcilerScheduleID, err)
	}
	log.Info("reconciler schedule created", "schedule", workflows.ReconcilerScheduleID, "every", cfg.ReconcileInterval)
	return nil
}
