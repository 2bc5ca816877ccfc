package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// soakEnv is the stack with the production worker and a seeder for n
// bookings.
type soakEnv struct {
	e2eEnv
	seed *seeder
}

// newSoakEnv is the whole stack on tc's server, with the resources n
// seeded bookings need and no cap on new idempotency keys: a shop's cap
// (IDEMPOTENCY_KEYS_PER_MINUTE) guards against a runaway client, and the
// soak seeds thousands of bookings a minute into one shop on purpose.
func newSoakEnv(t *testing.T, tc client.Client, n int) soakEnv {
	e := newStackEnvOn(t, tc, func(tc client.Client, cfg config.Config, pool *pgxpool.Pool) {
		testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) {
			stack.Register(r, stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), tc))
		})
	}, func(e *env) {
		e.cfg.KeysPerMinute = 0
		require.NoError(t, seedSoakResources(context.Background(), e.pool, n))
	})
	s, err := newSeeder(e.cfg, e.pool, testsupport.Tenants(t, e.pool), e.tc, n, e.base)
	require.NoError(t, err)
	return soakEnv{e2eEnv: e, seed: s}
}

// TestSoakSmoke is the soak's seeding, small: 100 confirmed bookings
// opened through the real APIs, 16 at a time. Each has its reservation
// confirmed and its deposit captured, once, and its BookingWorkflow
// running, started with the input and search attributes a booking
// through the whole saga starts its lifecycle with.
func TestSoakSmoke(t *testing.T) {
	const n = 100
	e := newSoakEnv(t, temporaltest.Temporal(t), n)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := Run(ctx, Load{Concurrency: 16, Ops: n}, e.seed.op())
	require.Zero(t, r.Errors, "%v", r.FirstErr)
	t.Logf("seeded %d bookings in %v (%.0f/s, p50 %v, p95 %v)", r.Ops, r.Elapsed.Round(time.Millisecond), r.OpsPerSec(), r.P50(), r.P95())

	require.Equal(t, n, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations
		WHERE tenant_id = $1 AND status = 'confirmed' AND resource_id LIKE 'soak-%'`, tenant), "one confirmed reservation each")
	require.Equal(t, n, countRows(t, e.pool, `SELECT count(*) FROM payment_intents p JOIN calendar_reservations r
		ON r.tenant_id = p.tenant_id AND r.reference = p.booking_reference
		WHERE r.resource_id LIKE 'soak-%' AND p.status = 'succeeded' AND p.amount_captured = p.amount`), "one captured deposit each")
	refs := seededRefs(t, e.pool)
	require.Len(t, refs, n)
	testsupport.Eventually(t, time.Minute, "every seeded lifecycle running its first task", func() bool {
		for _, ref := range refs {
			d, err := e.tc.DescribeWorkflowExecution(ctx, lifecycle.WorkflowID(ref), "")
			require.NoError(t, err)
			info := d.WorkflowExecutionInfo
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, info.Status, ref)
			if info.HistoryLength < 4 { // started, its first task scheduled, started, completed
				return false
			}
		}
		return true
	})

	// A booking through the whole saga: its lifecycle starts as the
	// seeded ones did, but for what is this booking's own.
	require.NoError(t, e.bookingOp(t)(ctx, n))
	real := testsupport.AppointmentID(t, tenant, phone(e.base, n), intent.ServiceTireChange, bookingSlot(e.cfg.Timezone, time.Now().In(e.cfg.Timezone), n))
	want, wantAttrs := startedWith(ctx, t, e.tc, real)
	got, gotAttrs := startedWith(ctx, t, e.tc, refs[0])
	require.Equal(t, ownFieldsCleared(want), ownFieldsCleared(got), "the seeded lifecycle's input")
	require.Equal(t, wantAttrs, gotAttrs, "the seeded lifecycle's search attributes")
}

// seededRefs are the references of the confirmed reservations on the
// soak's resources.
func seededRefs(t *testing.T, pool *pgxpool.Pool) []string {
	rows, err := pool.Query(context.Background(), `SELECT reference FROM calendar_reservations
		WHERE tenant_id = $1 AND status = 'confirmed' AND resource_id LIKE 'soak-%' ORDER BY reference`, tenant)
	require.NoError(t, err)
	var refs []string
	for rows.Next() {
		var ref string
		require.NoError(t, rows.Scan(&ref))
		refs = append(refs, ref)
	}
	require.NoError(t, rows.Err())
	return refs
}

// startedWith is the input and the names of the search attributes the
// lifecycle of the booking ref was started with.
func startedWith(ctx context.Context, t *testing.T, tc client.Client, ref string) (lifecycle.Input, []string) {
	it := tc.GetWorkflowHistory(ctx, lifecycle.WorkflowID(ref), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := it.Next()
	require.NoError(t, err)
	attrs := first.GetWorkflowExecutionStartedEventAttributes()
	require.NotNil(t, attrs, "the first event starts the workflow")
	var in lifecycle.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(attrs.Input, &in))
	return in, slices.Sorted(maps.Keys(attrs.SearchAttributes.GetIndexedFields()))
}

// ownFieldsCleared is in without what differs from booking to booking.
func ownFieldsCleared(in lifecycle.Input) lifecycle.Input {
	in.Reference, in.Customer, in.BookingID, in.ResourceID, in.IntentID = "", "", "", "", ""
	in.SlotStart, in.SlotEnd = time.Time{}, time.Time{}
	return in
}

// soakLevels are SOAK_N's levels of open lifecycles (default 1k, 5k, 20k).
func soakLevels(t *testing.T) []int {
	raw := os.Getenv("SOAK_N")
	if raw == "" {
		return []int{1000, 5000, 20000}
	}
	var levels []int
	for _, f := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "SOAK_N: levels of open bookings, e.g. 1000,5000,20000")
		require.Positive(t, n, "SOAK_N")
		levels = append(levels, n)
	}
	require.True(t, slices.IsSorted(levels), "SOAK_N: levels in increasing order")
	return levels
}

// TestSoakFull is `make soak`: on make run's file-backed server, it opens
// lifecycles up to each level of SOAK_N and reports the seeding rate, the
// process's memory and the server's database size there. (The measured
// load on top of them is the next step of the soak.)
func TestSoakFull(t *testing.T) {
	if os.Getenv("BOOKONCE_SOAK") != "1" {
		t.Skip("BOOKONCE_SOAK=1 (make soak) runs the soak")
	}
	levels := soakLevels(t)
	tc := makeRunTemporal(t)
	e := newSoakEnv(t, tc, levels[len(levels)-1])
	ctx := context.Background()
	open := 0
	for _, level := range levels {
		r := Run(ctx, Load{Concurrency: 32, Ops: level - open, SeqBase: open}, e.seed.op())
		require.Zero(t, r.Errors, "%v", r.FirstErr)
		open = level
		running := 0
		testsupport.Eventually(t, 10*time.Minute, fmt.Sprintf("%d lifecycles running", level), func() bool {
			c, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
				Query: fmt.Sprintf("WorkflowType = %q AND ExecutionStatus = 'Running'", lifecycle.WorkflowName)})
			require.NoError(t, err)
			running = int(c.Count)
			return running >= level
		})
		t.Logf("soak: %d open lifecycles; seeded %d at %.0f/s (p50 %v, p95 %v); memory %+v", running, r.Ops, r.OpsPerSec(), r.P50(), r.P95(), mustReadMem(t))
	}
}
