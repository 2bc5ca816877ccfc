// Package reconciler is the sweep that finds holds, bookings and
// authorisations whose appointment saga ended (terminated, timed out or
// missing) without settling them, and settles them or hands them to a
// person (docs/reconciler.md). A Temporal Schedule starts it every
// RECONCILE_INTERVAL.
//
// This file is what callers use: the registered names, the input and
// result, registration and the schedule. workflows.go is the workflow.
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/workflows"
)

// WorkflowName is the registered workflow type. It is the name the
// function had before it moved into this package: schedules and running
// sweeps refer to it, so it never changes.
const WorkflowName = "ReconcilerWorkflow"

// ScheduleID is the Temporal Schedule that starts the workflow every
// RECONCILE_INTERVAL.
const ScheduleID = "bookonce-reconciler"

// DefaultLookback bounds a sweep to effects of the last day: Temporal's
// shortest namespace retention, so a saga the sweep looks for has not
// been deleted by retention yet.
const DefaultLookback = 24 * time.Hour

// Input is one sweep over tenants.
type Input struct {
	// Tenants are swept in turn; with AllTenants, every tenant there is
	// when the sweep runs (a shop applied since the worker started too),
	// and Tenants is not read.
	Tenants    []string `json:"tenants"`
	AllTenants bool     `json:"all_tenants,omitempty"`
	// Grace leaves effects alone that are younger, or whose saga closed
	// more recently (zero: none; the schedule passes RECONCILE_GRACE).
	Grace workflows.Duration `json:"grace"`
	// Lookback: zero is DefaultLookback.
	Lookback workflows.Duration `json:"lookback,omitempty"`
	// Tuning shortens timeouts and retries (tests).
	Tuning workflows.Tuning `json:"tuning,omitempty"`
}

// Result says what one sweep did.
type Result struct {
	// Repairs counts effects repaired, by kind (activities.Repair*).
	Repairs map[string]int `json:"repairs"`
	// Unchanged counts orphans a repair found settled meanwhile.
	Unchanged int `json:"unchanged"`
	// Skipped counts references whose saga runs or closed too recently.
	Skipped int `json:"skipped"`
	// Settled counts references whose saga the sweep's listing showed
	// completed as confirmed, so that it did not describe them.
	Settled int `json:"settled"`
	// Failed lists repairs that did not succeed; the next sweep finds
	// those effects again.
	Failed []string `json:"failed,omitempty"`
}

// Register adds the workflow, under WorkflowName, and the activities of
// rc to a worker. Under Worker Versioning a sweep is pinned: it takes
// seconds, and the schedule starts the next one on the current build.
func Register(r worker.Registry, rc *activities.Reconciler) {
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName, VersioningBehavior: workflow.VersioningBehaviorPinned})
	r.RegisterActivity(rc)
}

// Schedule is how often, on which queue and over what the schedule sweeps.
type Schedule struct {
	Every     time.Duration
	TaskQueue string
	Input     Input
}

// EnsureSchedule creates the Temporal Schedule that starts the workflow
// every s.Every, or brings an existing one in line with s: the worker's
// configuration is the truth, so a tenant added later is swept too. Every
// worker calls it at start. Overlapping sweeps are skipped.
func EnsureSchedule(ctx context.Context, tc client.Client, s Schedule, log *slog.Logger) error {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}}
	action := &client.ScheduleWorkflowAction{ID: "reconciler", Workflow: WorkflowName, Args: []any{s.Input}, TaskQueue: s.TaskQueue}
	_, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: ScheduleID, Spec: spec, Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, Action: action,
		Note: "bookonce: repair holds, bookings and authorisations whose saga ended without settling them (docs/reconciler.md)",
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		err = tc.ScheduleClient().GetHandle(ctx, ScheduleID).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				sched := in.Description.Schedule
				sched.Spec, sched.Action = &spec, action
				return &client.ScheduleUpdate{Schedule: &sched}, nil
			},
		})
		if err != nil {
			return fmt.Errorf("update schedule %s: %w", ScheduleID, err)
		}
		log.Debug("reconciler schedule updated", "schedule", ScheduleID, "every", s.Every)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", ScheduleID, err)
	}
	log.Info("reconciler schedule created", "schedule", ScheduleID, "every", s.Every)
	return nil
}
