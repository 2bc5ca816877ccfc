package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/deploychange"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// startBuild starts a worker of build on the test's queue, as the worker
// process starts it with WORKER_BUILD_ID set.
func (e env) startBuild(t *testing.T, deployment, build string, interceptors ...interceptor.WorkerInterceptor) (config.Versioning, worker.Worker) {
	t.Helper()
	cfg := e.cfg
	cfg.Versioning = config.Versioning{Deployment: deployment, BuildID: build, Promote: true}
	opts := stack.WorkerOptions(cfg)
	opts.WorkflowPanicPolicy, opts.Interceptors = worker.FailWorkflow, interceptors
	w := worker.New(e.tc, e.queue, opts)
	stack.Register(w, stack.NewActivities(e.cfg, e.pool, testsupport.Tenants(t, e.pool), e.tc))
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return cfg.Versioning, w
}

// promote waits for the server to know build v and makes it current, as
// the worker process does at start; it reports whether it promoted.
func promote(t *testing.T, tc client.Client, v config.Versioning) bool {
	t.Helper()
	var promoted bool
	testsupport.Eventually(t, 60*time.Second, "build "+v.BuildID+" known to the server", func() bool {
		var err error
		promoted, err = stack.PromoteVersion(context.Background(), tc, "default", v)
		return err == nil
	})
	return promoted
}

// buildsOf are the builds that completed the workflow's tasks, in order,
// and whether any task failed (a non-determinism fails the task).
func buildsOf(t *testing.T, tc client.Client, id string) (builds []string, failed bool) {
	t.Helper()
	for _, ev := range history(t, tc, tc.GetWorkflow(context.Background(), id, "")) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			b := ev.GetWorkflowTaskCompletedEventAttributes().GetDeploymentVersion().GetBuildId()
			if len(builds) == 0 || builds[len(builds)-1] != b {
				builds = append(builds, b)
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			failed = true
		}
	}
	return builds, failed
}

// hasMarker reports whether the workflow recorded the change's version.
func hasMarker(events []*historypb.HistoryEvent, change string) bool {
	for _, ev := range events {
		if m := ev.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
			var id string
			if p, ok := m.GetDetails()["change-id"]; ok && len(p.GetPayloads()) == 1 {
				id = string(p.GetPayloads()[0].GetData())
			}
			if id == `"`+change+`"` {
				return true
			}
		}
	}
	return false
}

// A deploy while bookings wait. Build v1 serves: one booking waits for
// its customer to pay the link, another is confirmed and its lifecycle
// waits for the slot. Build v2, whose lifecycle makes a change guarded
// by GetVersion (package deploychange), starts and promotes itself. The waiting saga, pinned,
// ends on v1 and books and charges once; the lifecycle, auto-upgrading,
// takes its cancel on v2 through the new branch; no workflow task fails
// (no non-determinism), a restarted v1 worker does not take the traffic
// back, and once v1's workers stop its bookings still show their state.
func TestDeployWhileBookingsWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	deployment := "bookonce-" + e.queue
	v1, v1Worker := e.startBuild(t, deployment, "v1")
	require.True(t, promote(t, e.tc, v1), "the first build becomes current")

	confirmed := request(t, "+4915112347001", time.Wednesday, 9)
	r, st := run(t, e, confirmed)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	waiting := request(t, "+4915112347002", time.Wednesday, 10)
	waiting.PaymentMethod, waiting.Channel = "", workflows.ChannelVoice
	w, _, err := appointment.Start(ctx, e.tc, e.queue, waiting)
	require.NoError(t, err)
	testsupport.Eventually(t, 60*time.Second, "the payment link sent", func() bool {
		return e.messageStates(t, w.GetID())["payment_link"] != ""
	})

	v2, _ := e.startBuild(t, deployment, "v2", deploychange.Interceptor())
	require.True(t, promote(t, e.tc, v2), "the new build becomes current")
	require.False(t, promote(t, e.tc, v1), "a restarted old build does not take the traffic back")

	cancelled, err := lifecycle.Cancel(ctx, e.tc, r.GetID(), lifecycle.CancelUpdateID("demo", "deploy-1"), lifecycle.CancelRequest{Reason: "deploy test"})
	require.NoError(t, err)
	require.Equal(t, workflows.StatusCancelled, cancelled.Status)
	require.Equal(t, lifecycle.DepositRefunded, cancelled.Deposit)
	builds, failed := buildsOf(t, e.tc, lifecycle.WorkflowID(r.GetID()))
	require.False(t, failed, "no workflow task of the lifecycle failed")
	require.Equal(t, []string{"v1", "v2"}, builds, "the lifecycle moved to v2 at its next task")
	require.True(t, hasMarker(history(t, e.tc, e.tc.GetWorkflow(ctx, lifecycle.WorkflowID(r.GetID()), "")), deploychange.ChangeID),
		"v2 took the new branch")
	got := e.effects(t, confirmed.Customer, confirmed.SlotStart)
	require.Equal(t, map[string]int{"cancelled": 1}, got.Reservations)
	require.Equal(t, 1, got.Refunds)

	payByLink(t, ctx, e.tc, e.pool, w.GetID())
	paid := result(t, w)
	require.Equal(t, workflows.StatusConfirmed, paid.Status, paid.Reason)
	for _, id := range []string{w.GetID(), deposit.WorkflowID(w.GetID())} {
		builds, failed := buildsOf(t, e.tc, id)
		require.False(t, failed, "no workflow task of %s failed", id)
		require.Equal(t, []string{"v1"}, builds, "%s, pinned, ended on the build that started it", id)
	}
	want := booked
	want.Messages = 2 // the link and the confirmation
	require.Equal(t, want, e.effects(t, waiting.Customer, waiting.SlotStart), "one booking, one deposit captured once")

	// Visibility catches up with the ended sagas: v1 then holds no pinned
	// run (it may be stopped), and the cancelled booking, lingering on v2,
	// shows the change it recorded.
	var v stack.Versions
	testsupport.Eventually(t, 30*time.Second, "no pinned run open on v1", func() bool {
		var err error
		v, err = stack.ReadVersions(ctx, e.tc, e.cfg.TemporalNamespace, deployment)
		require.NoError(t, err)
		pinnedOnV1, lifecyclesOnV2 := 0, 0
		for _, o := range v.Open {
			switch {
			case o.BuildID == "v1" && o.Behavior == "Pinned":
				pinnedOnV1 += o.Count
			case o.BuildID == "v2" && o.Type == lifecycle.WorkflowName && o.Behavior == "AutoUpgrade":
				lifecyclesOnV2 += o.Count
			}
		}
		return pinnedOnV1 == 0 && lifecyclesOnV2 >= 1
	})
	require.Len(t, v.Builds, 2)
	require.Equal(t, stack.Build{BuildID: "v2", Status: "current", Created: v.Builds[0].Created}, v.Builds[0])
	require.Equal(t, "v1", v.Builds[1].BuildID)
	// v1's workers stop, as a rollout ends: a booking it ran still shows
	// its state (read from its result, not a query v1 would answer).
	v1Worker.Stop()
	st, err = appointment.StatusOf(ctx, e.tc, w.GetID())
	require.NoError(t, err)
	require.Equal(t, workflows.StatusConfirmed, st.Status)
	// The namespace is shared with other tests (and their reruns).
	require.GreaterOrEqual(t, v.Changes[deploychange.Marker()], 1, "the cancelled booking recorded the change: %+v", v.Changes)
}
