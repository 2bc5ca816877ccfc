package main

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// starterStack runs the real stack (APIs, worker, gateway) and points
// starter's environment at it.
func starterStack(t *testing.T) (*pgxpool.Pool, client.Client, string) {
	t.Helper()
	cfg := testsupport.Config(t)
	pool := testsupport.Database(t)
	tc := temporaltest.Temporal(t)
	queue := testsupport.TaskQueue(t)
	cfg.TaskQueue = queue
	cfg.CalendarURL = stacktest.CalendarAPI(t, cfg, pool).URL
	cfg.PaymentsURL = stacktest.PaymentsAPI(t, cfg, pool).URL
	registry := testsupport.Tenants(t, pool)
	testsupport.Worker(t, tc, queue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(cfg, pool, registry, tc)) })
	gw, _ := stack.Gateway(cfg, pool, tc, registry, stack.Logger(cfg, &bytes.Buffer{}))
	srv := httptest.NewServer(gw.AdminHandler())
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Setenv("TEMPORAL_ADDRESS", temporaltest.HostPort(t))
	t.Setenv("TEMPORAL_TASK_QUEUE", queue)
	t.Setenv("CALENDAR_URL", cfg.CalendarURL)
	t.Setenv("ADMIN_LISTEN", net.JoinHostPort(host, port))
	return pool, tc, queue
}

// TestNoShowCommand books with "starter book"; "starter no-show" before
// the slot is refused with the reason (exit 1). With the slot begun (the
// booking's lifecycle restarted with its slot ten minutes ago: the server
// cannot skip time), two runs mark it NoShow with the same answer, and
// the deposit stays captured.
func TestNoShowCommand(t *testing.T) {
	pool, tc, queue := starterStack(t)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"book", "--customer", "+4915112340014", "--service", "tire-change", "--start", "next"}, &stdout, &stderr),
		"stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	m := startedID.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	id := m[1]

	stdout.Reset()
	require.Equal(t, exitFailed, run([]string{"no-show", id}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "not_no_show")
	require.Contains(t, stderr.String(), "has not begun")

	restartWithSlotBegun(t, tc, queue, id)
	var outs []string
	for range 2 {
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, exitOK, run([]string{"no-show", "--note", "did not come", id}, &stdout, &stderr), "stderr: %s", stderr.String())
		outs = append(outs, stdout.String())
	}
	require.Contains(t, outs[0], "status    NoShow")
	require.Contains(t, outs[0], "deposit   kept")
	require.Equal(t, outs[0], outs[1], "the second run answers the first's state")
	var refunds int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id
		WHERE p.booking_reference = $1`, id).Scan(&refunds))
	require.Zero(t, refunds, "the deposit is kept")

	stderr.Reset()
	require.Equal(t, exitUsage, run([]string{"no-show", "bk_1"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "not an appointment's workflow ID")
}

// restartWithSlotBegun terminates the booking's lifecycle and starts it
// again with the input its appointment gave it, the slot moved to have
// begun ten minutes ago.
func restartWithSlotBegun(t *testing.T, tc client.Client, queue, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wid := lifecycle.WorkflowID(id)
	first, err := tc.GetWorkflowHistory(ctx, wid, "", false, 0).Next()
	require.NoError(t, err)
	var in lifecycle.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(first.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in))
	require.NoError(t, tc.TerminateWorkflow(ctx, wid, "", "test: the slot is moved to now"))
	in.SlotStart = time.Now().Add(-10 * time.Minute).UTC()
	in.SlotEnd = in.SlotStart.Add(time.Hour)
	_, err = tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: queue}, lifecycle.WorkflowName, in)
	require.NoError(t, err)
}
