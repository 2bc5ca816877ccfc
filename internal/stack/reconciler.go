package stack

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// NewReconciler wires the reconciler's activities to the same APIs and
// review queue as the sagas' (acts), and to Temporal for "is the saga
// still running?".
func NewReconciler(acts *activities.Activities, tc client.Client) *activities.Reconciler {
	return &activities.Reconciler{Calendar: acts.Calendar, Payments: acts.Payments, Reviews: acts.Reviews, Temporal: tc}
}

// ReconcileInput is the sweep the schedule starts: every configured
// tenant, with the configured grace period.
func ReconcileInput(cfg config.Config) reconciler.Input {
	return reconciler.Input{Tenants: cfg.Tenants(), Grace: cfg.ReconcileGrace}
}

// EnsureReconcileSchedule creates or updates the reconciler's schedule
// from the worker's configuration (RECONCILE_INTERVAL, the tenants,
// RECONCILE_GRACE; see reconciler.EnsureSchedule).
func EnsureReconcileSchedule(ctx context.Context, tc client.Client, cfg config.Config, log *slog.Logger) error {
	return reconciler.EnsureSchedule(ctx, tc, reconciler.Schedule{Every: cfg.ReconcileInterval, TaskQueue: cfg.TaskQueue, Input: ReconcileInput(cfg)}, log)
}
