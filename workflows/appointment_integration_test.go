package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// env is one test's real stack: PostgreSQL database, calendar API on
// loopback, in-process Temporal server and a worker on its own queue.
type env struct {
	pool  *pgxpool.Pool
	tc    client.Client
	queue string
}

func newEnv(t *testing.T) env {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.CalendarURL = testsupport.CalendarAPI(t, cfg, pool).URL
	tc := testsupport.Temporal(t)
	queue := testsupport.TaskQueue(t)
	testsupport.Worker(t, tc, queue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(cfg)) })
	return env{pool: pool, tc: tc, queue: queue}
}

// nextWeekday returns 14:00 Berlin time on the next given weekday after now,
// so the slot is always in the future and inside opening hours.
func nextWeekday(t *testing.T, wd time.Weekday, hour int) time.Time {
	t.Helper()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	d := time.Now().In(berlin).AddDate(0, 0, 1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), hour, 0, 0, 0, berlin)
}

func (e env) reservations(t *testing.T, reference string) map[string]int {
	t.Helper()
	rows, err := e.pool.Query(context.Background(),
		`SELECT status, count(*) FROM calendar_reservations WHERE reference = $1 GROUP BY status`, reference)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		out[s] = n
	}
	return out
}

func TestAppointmentBooksOnceAndSecondStartIsNoOp(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := workflows.BookingRequest{
		Tenant: "demo", Customer: "+4915112345678", Service: "tire-change",
		SlotStart: nextWeekday(t, time.Tuesday, 14), Channel: workflows.ChannelAPI, DepositAmount: 2000, Currency: "eur",
	}
	run, existing, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	require.False(t, existing)
	var st workflows.BookingState
	require.NoError(t, run.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status)
	require.Equal(t, run.GetID(), st.Reference)
	require.NotEmpty(t, st.BookingID)
	require.Len(t, st.Steps, 2)
	for _, s := range st.Steps {
		require.Regexp(t, `^bko1_[0-9a-f]{48}$`, s.Key, "every step carries its derived key")
		require.NotEmpty(t, s.DownstreamID)
	}
	require.NotEqual(t, st.Steps[0].Key, st.Steps[1].Key, "each activity has its own key")
	require.Equal(t, map[string]int{"confirmed": 1}, e.reservations(t, run.GetID()))

	// The same intent again: no second run, no second hold.
	again, existing, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	require.True(t, existing)
	require.Equal(t, run.GetRunID(), again.GetRunID())
	require.Equal(t, map[string]int{"confirmed": 1}, e.reservations(t, run.GetID()))

	// The Web UI's filter finds it by its search attributes.
	query := fmt.Sprintf(`WorkflowId = %q AND CustomerPhone = "+4915112345678" AND BookingStatus = "Confirmed" AND Service = "tire-change"`, run.GetID())
	testsupport.Eventually(t, 20*time.Second, "visibility to list the confirmed booking", func() bool {
		resp, err := e.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.GetExecutions()) == 1
	})
}

func TestAppointmentSlotTakenIsRejectedWithAlternatives(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	slot := nextWeekday(t, time.Wednesday, 10)
	// Two different customers want bay-1 at the same time.
	first := workflows.BookingRequest{Tenant: "demo", Customer: "+4915112345678", Service: "inspection", ResourceID: "bay-1", SlotStart: slot, Channel: workflows.ChannelAPI}
	second := first
	second.Customer = "+4915199999999"

	run1, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, first)
	require.NoError(t, err)
	var st1 workflows.BookingState
	require.NoError(t, run1.Get(ctx, &st1))
	require.Equal(t, workflows.StatusConfirmed, st1.Status)

	run2, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, second)
	require.NoError(t, err)
	var st2 workflows.BookingState
	require.NoError(t, run2.Get(ctx, &st2))
	require.Equal(t, workflows.StatusRejected, st2.Status)
	require.Equal(t, "slot_unavailable", st2.Reason)
	require.NotEmpty(t, st2.Alternatives, "a taken slot offers alternatives")
	require.Empty(t, e.reservations(t, run2.GetID()), "a rejected booking leaves nothing in the calendar")
	require.Equal(t, map[string]int{"confirmed": 1}, e.reservations(t, run1.GetID()))
}
