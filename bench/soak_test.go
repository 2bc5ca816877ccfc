package bench

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// soakEnv is the stack with the production worker in a process of its
// own and a seeder for n bookings.
type soakEnv struct {
	e2eEnv
	seed    *seeder
	worker  proc
	metrics string // the worker's /metrics
}

// newSoakEnv is the whole stack on the server at hostPort (tc its
// client), with the production worker as a process of its own (the
// resources n seeded bookings need and no cap on new idempotency keys: a
// shop's cap (IDEMPOTENCY_KEYS_PER_MINUTE) guards against a runaway
// client, and the soak seeds thousands of bookings a minute into one
// shop on purpose.
func newSoakEnv(t *testing.T, tc client.Client, n int, hostPort string) soakEnv {
	var worker proc
	var metrics string
	e := newStackEnvOn(t, tc, func(tc client.Client, cfg config.Config, pool *pgxpool.Pool) {
		worker, metrics = startWorkerProcess(t, cfg, pool.Config().ConnString(), hostPort)
	}, func(e *env) {
		e.cfg.KeysPerMinute = 0
		require.NoError(t, seedSoakResources(context.Background(), e.pool, n))
	})
	s, err := newSeeder(e.cfg, e.pool, testsupport.Tenants(t, e.pool), e.tc, n, e.base)
	require.NoError(t, err)
	return soakEnv{e2eEnv: e, seed: s, worker: worker, metrics: metrics}
}

// cache reads the worker's workflow cache.
func (e soakEnv) cache(t *testing.T) cacheReading { return readCache(t, e.metrics) }

// TestSoakSmoke is the soak's seeding, small: 100 confirmed bookings
// opened through the real APIs, 16 at a time. Each has its reservation
// confirmed and its deposit captured, once, and its BookingWorkflow
// running, started with the input and search attributes a booking
// through the whole saga starts its lifecycle with.
func TestSoakSmoke(t *testing.T) {
	const n = 100
	e := newSoakEnv(t, temporaltest.Temporal(t), n, temporaltest.HostPort(t))
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

	// The soak reads the worker process's workflow cache from its metrics.
	c := e.cache(t)
	require.Positive(t, c.size, "workflows in the worker's cache")
	require.Positive(t, c.hits, "tasks that found their workflow in the worker's cache")
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
