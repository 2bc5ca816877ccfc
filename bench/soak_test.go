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
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// soakEnv is the stack with the production worker in a process of its
// own and a seeder for n bookings.
type soakEnv struct {
	e2eEnv
	seed   *seeder
	worker workerProcess
	// startBuild starts one more worker process, as role and of build.
	startBuild func(t *testing.T, role, build string) workerProcess
}

// newSoakEnv is the whole stack on the server at hostPort (tc its
// client), with the production worker as a process of its own (the
// resources n seeded bookings need and no cap on new idempotency keys: a
// shop's cap (IDEMPOTENCY_KEYS_PER_MINUTE) guards against a runaway
// client, and the soak seeds thousands of bookings a minute into one
// shop on purpose.
func newSoakEnv(t *testing.T, tc client.Client, n int, hostPort string) soakEnv {
	var start func(t *testing.T, role, build string) workerProcess
	e := newStackEnvOn(t, tc, func(tc client.Client, cfg config.Config, pool *pgxpool.Pool) {
		// The worker runs as a build of a Worker Deployment of its own, as
		// compose and Kubernetes run it, so that the soak can deploy.
		deployment := "soak-" + cfg.TaskQueue
		start = func(t *testing.T, role, build string) workerProcess {
			return startWorkerProcess(t, role, cfg, pool.Config().ConnString(), hostPort, soakReconcile,
				config.WorkerDeploymentVar+"="+deployment, config.WorkerBuildIDVar+"="+build)
		}
	}, func(e *env) {
		e.cfg.KeysPerMinute = 0
		require.NoError(t, seedSoakResources(context.Background(), e.pool, n))
	})
	e.lookEvery = soakLookEvery
	s, err := newSeeder(e.cfg, e.pool, testsupport.Tenants(t, e.pool), e.tc, n, e.base)
	require.NoError(t, err)
	return soakEnv{e2eEnv: e, seed: s, worker: start(t, roleWorker, soakFrom), startBuild: start}
}

// soakLookEvery is how often, at most, a new booking looks for its
// appointment to exist before it waits for the appointment's result. The
// appointment's close time marks the booking's end (markClosed), so a
// slower look costs no precision, while a look every 25 ms was the
// bench's own load on Temporal that grew with the latency it measured:
// past saturation the server read a workflow by ID 421 times a booking,
// against 16 below it (docs/benchmarks.md, "Where the PostgreSQL
// backend's time goes").
const soakLookEvery = 500 * time.Millisecond

// soakReconcile keeps the reconciler's sweep out of the soak: a seeded
// booking has no appointment saga (the seeding skips it), so every sweep
// would take each one of the last day for an orphan and open a review
// case for it, which is the seeding's artefact, not load a shop makes.
const soakReconcile = "RECONCILE_INTERVAL=24h"

// cache reads the worker's workflow cache.
func (e soakEnv) cache(t *testing.T) cacheReading { return readCache(t, e.worker.metrics) }

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

	// Cancels and moves through the gateway's API, as the soak runs them
	// beside its new bookings: a cancelled booking has no slot left and
	// its deposit back; a moved one holds the move bay's slot instead of
	// its own.
	change := e.changeOp(n, 0)
	for i := range 4 {
		require.NoError(t, change(ctx, i))
	}
	for i := range 4 {
		b, err := e.seed.booking(n - 1 - i)
		require.NoError(t, err)
		ref := b.in.Reference
		if i%2 == 0 {
			require.Zero(t, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status IN ('held', 'confirmed')`, ref), "cancelled %s keeps no slot", ref)
			require.Equal(t, 1, countRows(t, e.pool, `SELECT count(*) FROM payment_intents WHERE booking_reference = $1 AND amount_refunded = amount_captured AND amount_captured > 0`, ref), "cancelled %s: its deposit refunded", ref)
			continue
		}
		_, start := soakSlot(e.cfg.Timezone, e.seed.today, i, 1)
		var res string
		var at time.Time
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT resource_id, lower(slot) FROM calendar_reservations
			WHERE reference = $1 || $2 || '1' AND status = 'confirmed'`, ref, reference.MoveMark).Scan(&res, &at), "moved %s: its new booking", ref)
		require.Equal(t, soakMoveResource, res, "moved %s", ref)
		require.True(t, start.Equal(at), "moved %s to %v, want %v", ref, at, start)
		require.Zero(t, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status IN ('held', 'confirmed')`, ref), "moved %s keeps its old slot", ref)
	}

	// A reminder falling due: the lifecycle wakes on its timer and writes
	// it to the outbox.
	require.NoError(t, e.remindOp()(ctx, 0))

	// The soak reads the worker process's workflow cache from its metrics.
	c := e.cache(t)
	require.Positive(t, c.size, "workflows in the worker's cache")
	require.Positive(t, c.hits, "tasks that found their workflow in the worker's cache")

	// A deploy while bookings wait: a new build with a workflow change
	// takes over during a window of new bookings, changes of bookings the
	// old build opened and a reminder the old build's lifecycle set.
	run := &soakRun{e: e, procs: []proc{e.worker.proc}, every: soakEvery(soakRate), loadN: 8, changesN: 4, remindN: 1, loadSeq: n + 1, changeSeq: 4, remindSeq: 1}
	d := run.deploy(t, n-4) // below the bookings changed above
	t.Logf("deploy: %s", d)
	require.Empty(t, d.failures(), "%s", d)
	require.Equal(t, run.procs[0].pid, run.e.worker.pid, "the new build's worker is the soak's worker")
}

// seededRefs are the references of the seeded bookings still confirmed
// where they were seeded (not cancelled, not moved to the move bay).
func seededRefs(t *testing.T, pool *pgxpool.Pool) []string {
	rows, err := pool.Query(context.Background(), `SELECT reference FROM calendar_reservations
		WHERE tenant_id = $1 AND status = 'confirmed' AND resource_id LIKE 'soak-%' AND resource_id <> $2 ORDER BY reference`, tenant, soakMoveResource)
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
