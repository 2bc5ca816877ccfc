package stack

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// NewReconciler wires the reconciler's activities to the same APIs and
// review queue as the sagas' (acts), to Temporal for "is the saga still
// running?", and to the tenants registry for the tenants to sweep.
func NewReconciler(acts *activities.Activities, tc client.Client, reg *tenants.Registry) *activities.Reconciler {
	r := &activities.Reconciler{Calendar: acts.Calendar, Payments: acts.Payments, Reviews: acts.Reviews, Temporal: tc}
	if reg != nil {
		r.TenantIDs = func() []string {
			var ids []string
			for _, p := range reg.All() {
				ids = append(ids, p.ID)
			}
			return ids
		}
	}
	return r
}

// ReconcileInput is the sweep the schedule starts: every tenant there is
// when it runs, with the configured grace period.
func ReconcileInput(cfg config.Config) reconciler.Input {
	return reconciler.Input{AllTenants: true, Grace: cfg.ReconcileGrace}
}

// EnsureReconcileSchedule creates or updates the reconciler's schedule
// from the worker's configuration (RECONCILE_INTERVAL, the tenants,
// RECONCILE_GRACE; see reconciler.EnsureSchedule).
func EnsureReconcileSchedule(ctx context.Context, tc client.Client, cfg config.Config, log *slog.Logger) error {
	return reconciler.EnsureSchedule(ctx, tc, reconciler.Schedule{Every: cfg.ReconcileInterval, TaskQueue: cfg.TaskQueue, Input: ReconcileInput(cfg)}, log)
}
