package drill

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/testsupport"
)

// childEnv is the environment of a service process in these tests.
func childEnv(t *testing.T, dbURL string, addrs []string) []string {
	t.Helper()
	return []string{"DATABASE_URL=" + dbURL, "TEMPORAL_ADDRESS=" + addrs[0], "TEMPORAL_NAMESPACE=default",
		"CALENDAR_LISTEN=" + addrs[1], "PAYMENTS_LISTEN=" + addrs[2], "PAYMENTS_ADMIN_LISTEN=" + addrs[3], "CALENDAR_ADMIN_LISTEN=" + addrs[4], "LOG_FORMAT=json", "LOG_LEVEL=warn"}
}

// TestAPIProcessComesBackOnItsPortAfterSIGKILL: the drill's API processes
// are the production API (stack.RunPayments) in a child of the test
// binary; SIGKILLed, the next incarnation serves on the same address, so
// the fault proxy in front never needs to know, and the idempotency
// counters of the killed one are carried into the report.
func TestAPIProcessComesBackOnItsPortAfterSIGKILL(t *testing.T) {
	_, dbURL := testsupport.DatabaseURL(t)
	addrs, err := freeAddrs(5)
	require.NoError(t, err)
	opts := Options{LogDir: t.TempDir()}.withDefaults()
	svc := newService(upstreamPayments, rolePayments, addrs[2], childEnv(t, dbURL, addrs), opts, httpReady(addrs[2]))
	t.Cleanup(svc.close)
	ctx := t.Context()
	require.NoError(t, svc.start(ctx))
	first := svc.cmd.pid
	// The admin listener comes up a moment after the API's, which is what
	// start waits for; Gather never fails (a killed process shows what it
	// counted), so it is asked until the listener answers.
	metrics := newRemoteGatherer(addrs[3])
	testsupport.Eventually(t, 10*time.Second, "the process's /metrics is scraped, on its admin listener", func() bool {
		families, err := metrics.Gather()
		return err == nil && len(families) > 0
	})

	require.NoError(t, svc.stop(syscall.SIGKILL, 5*time.Second))
	_, err = net.DialTimeout("tcp", addrs[2], time.Second)
	require.Error(t, err, "nothing listens while the API is down")
	require.NoError(t, svc.start(ctx))
	require.NotEqual(t, first, svc.cmd.pid, "a new process")
	resp, err := http.Get("http://" + addrs[2] + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	select {
	case err := <-svc.exited:
		t.Fatalf("a kill the drill made is not an unexpected exit: %v", err)
	default:
	}
}

func restartWorkflow(workflow.Context) (string, error) { return "done", nil }

// TestTemporalProcessKeepsWorkflowsAcrossSIGKILL: the drill's Temporal
// server runs in its own process on a SQLite file; SIGKILLed and started
// again on the same addresses, it still knows a workflow started before
// the crash, and a worker connected before the crash completes a workflow
// started after it within seconds. (With fresh internal ports at each
// start, that took 57 s: the membership table still routed to the dead
// incarnation's history and matching addresses.)
func TestTemporalProcessKeepsWorkflowsAcrossSIGKILL(t *testing.T) {
	addrs, err := freeAddrs(5)
	require.NoError(t, err)
	ports, err := temporalPorts()
	require.NoError(t, err)
	dir := t.TempDir()
	opts := Options{LogDir: dir}.withDefaults()
	env := append(childEnv(t, "", addrs), temporalDBEnv+"="+dir+"/temporal.db", ports)
	svc := newService("temporal", roleTemporal, addrs[0], env, opts, temporalReady(addrs[0], "default"))
	t.Cleanup(svc.close)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	require.NoError(t, svc.start(ctx))
	c, err := client.DialContext(ctx, client.Options{HostPort: addrs[0], Namespace: "default", Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	defer c.Close()
	w := worker.New(c, "restart", worker.Options{})
	w.RegisterWorkflow(restartWorkflow)
	require.NoError(t, w.Start())
	defer w.Stop()
	before, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "before-the-crash", TaskQueue: "nobody-polls"}, "SomeWorkflow")
	require.NoError(t, err)

	require.NoError(t, svc.stop(syscall.SIGKILL, 5*time.Second))
	require.NoError(t, svc.start(ctx))

	d, err := c.DescribeWorkflowExecution(ctx, "before-the-crash", before.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus(), "the workflow started before the crash is still there")
	runCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	after, err := c.ExecuteWorkflow(runCtx, client.StartWorkflowOptions{ID: "after-the-crash", TaskQueue: "restart"}, restartWorkflow)
	require.NoError(t, err)
	var out string
	require.NoError(t, after.Get(runCtx, &out), "a workflow started after the crash completes within 20 s")
	require.Equal(t, "done", out)
}

// TestSearchLagsForAShareOfIncarnations: about the asked share of payment
// API incarnations search behind their writes, none of another service,
// and none when the lag is off.
func TestSearchLagsForAShareOfIncarnations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		role     string
		lag      time.Duration
		share    int
		min, max int
	}{
		{"half of the payment API's", rolePayments, 30 * time.Second, 50, 70, 130},
		{"every one", rolePayments, time.Second, 100, 200, 200},
		{"lag off", rolePayments, 0, 50, 0, 0},
		{"not the calendar's", roleCalendar, 30 * time.Second, 50, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService("payments", tc.role, "127.0.0.1:1", nil, Options{Seed: 7, SearchLag: tc.lag, SearchLagShare: tc.share}, nil)
			lagging := 0
			for s.starts = 1; s.starts <= 200; s.starts++ {
				if s.searchLags() {
					lagging++
				}
			}
			require.GreaterOrEqual(t, lagging, tc.min)
			require.LessOrEqual(t, lagging, tc.max)
		})
	}
}
