package stack_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// TestReconcileScheduleFollowsTheConfiguration: every worker start ensures
// the reconciler's schedule; a second start (another worker, a restart)
// finds it and brings it in line with its configuration; the schedule
// starts ReconcilerWorkflow on the worker's queue every RECONCILE_INTERVAL.
func TestReconcileScheduleFollowsTheConfiguration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tc := temporaltest.Temporal(t)
	cfg := testsupport.Config(t)
	cfg.TaskQueue = testsupport.TaskQueue(t)
	cfg.ReconcileInterval = 3 * time.Minute
	log := stack.Logger(cfg, io.Discard)
	require.NoError(t, stack.EnsureReconcileSchedule(ctx, tc, cfg, log))
	h := tc.ScheduleClient().GetHandle(ctx, reconciler.ScheduleID)
	t.Cleanup(func() { _ = h.Delete(context.Background()) }) // test cleanup only
	cfg.ReconcileInterval = time.Hour
	require.NoError(t, stack.EnsureReconcileSchedule(ctx, tc, cfg, log), "an existing schedule is updated")

	d, err := h.Describe(ctx)
	require.NoError(t, err)
	require.Len(t, d.Schedule.Spec.Intervals, 1)
	require.Equal(t, time.Hour, d.Schedule.Spec.Intervals[0].Every, "the configuration is the truth")
	require.Equal(t, cfg.TaskQueue, d.Schedule.Action.(*client.ScheduleWorkflowAction).TaskQueue)
	require.Equal(t, "ReconcilerWorkflow", d.Schedule.Action.(*client.ScheduleWorkflowAction).Workflow)
}
