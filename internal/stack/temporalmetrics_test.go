package stack_test

import (
	"context"
	"io"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
)

func metricsProbe(ctx workflow.Context) (string, error) { return "done", nil }

// label returns the value of a metric's label.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestWorkerRegistryHasTemporalSDKMetrics: a client dialled WithMetrics on
// the worker's registry exports the SDK's metrics next to bookonce's own:
// after a workflow ran on a worker of that client, /metrics has the
// completed workflow of that task queue, the client's requests and the
// task latency histogram (in seconds), and the PostgreSQL state gauges.
func TestWorkerRegistryHasTemporalSDKMetrics(t *testing.T) {
	ctx := context.Background()
	cfg := testsupport.Config(t)
	cfg.TemporalAddress = temporaltest.HostPort(t)
	log := stack.Logger(cfg, io.Discard)
	reg := stack.Registry()
	tc, err := stack.Dial(ctx, cfg, log, stack.WithMetrics(reg))
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	svc := stack.WorkerServiceOn(reg, testsupport.Database(t), tc, log)

	_, err = stack.Dial(ctx, cfg, log, stack.WithMetrics(reg))
	require.Error(t, err, "a second client on the same registry is refused, not silently merged")

	queue := testsupport.TaskQueue(t)
	testsupport.Worker(t, tc, queue, func(r worker.Registry) { r.RegisterWorkflow(metricsProbe) })
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "metrics-probe-" + queue, TaskQueue: queue}, metricsProbe)
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))

	families := map[string]*dto.MetricFamily{}
	testsupport.Eventually(t, 10*time.Second, "the completed workflow counted", func() bool {
		mfs, err := svc.Gatherer.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			families[mf.GetName()] = mf
		}
		for _, m := range families["temporal_workflow_completed_total"].GetMetric() {
			if label(m, "task_queue") == queue && label(m, "workflow_type") == "metricsProbe" && m.GetCounter().GetValue() == 1 {
				return true
			}
		}
		return false
	})
	for name, typ := range map[string]dto.MetricType{
		"temporal_workflow_completed_total":                        dto.MetricType_COUNTER,
		"temporal_request_total":                                   dto.MetricType_COUNTER,
		"temporal_long_request_total":                              dto.MetricType_COUNTER,
		"temporal_workflow_task_execution_latency_seconds":         dto.MetricType_HISTOGRAM,
		"temporal_workflow_task_schedule_to_start_latency_seconds": dto.MetricType_HISTOGRAM,
		"bookonce_state_up":                                        dto.MetricType_GAUGE,
		"go_goroutines":                                            dto.MetricType_GAUGE,
	} {
		require.Contains(t, families, name)
		require.Equal(t, typ, families[name].GetType(), name)
	}
	require.Equal(t, 1.0, families["bookonce_state_up"].GetMetric()[0].GetGauge().GetValue())
	require.NotContains(t, families, "target_info", "no OpenTelemetry resource noise")
}
