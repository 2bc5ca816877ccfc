package workflows_test

// The real stack of the integration tests in this package (env) and what
// they read back from it: effects downstream, review cases, results.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// env is one test's real stack: a fresh PostgreSQL database, the calendar
// and payment APIs on loopback (optionally behind fault proxies), the
// in-process Temporal server and a worker on the test's own queue.
type env struct {
	pool     *pgxpool.Pool
	tc       client.Client
	queue    string
	cfg      config.Config
	calendar *testsupport.Proxy
	payments *testsupport.Proxy
	// fake is the fake Twilio of a test that runs the outbox relay (nil:
	// none); effects then counts the messages it accepted.
	fake *twilio.FakeServer
}

func newEnv(t *testing.T, tweak ...func(*config.Config)) env {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	for _, f := range tweak {
		f(&cfg)
	}
	e := env{pool: pool, tc: temporaltest.Temporal(t), queue: testsupport.TaskQueue(t), cfg: cfg}
	e.calendar = testsupport.NewProxy(t, stacktest.CalendarAPI(t, cfg, pool).URL)
	e.payments = testsupport.NewProxy(t, stacktest.PaymentsAPI(t, cfg, pool).URL)
	e.cfg.CalendarURL, e.cfg.PaymentsURL = e.calendar.URL, e.payments.URL
	return e
}

func (e env) startWorker(t *testing.T, interceptors ...interceptor.WorkerInterceptor) worker.Worker {
	return testsupport.Worker(t, e.tc, e.queue, func(r worker.Registry) {
		stack.Register(r, stack.NewActivities(e.cfg, e.pool, testsupport.Tenants(t, e.pool), e.tc))
	}, interceptors...)
}

// request is a booking of its own: the intent ID is unique per call, so a
// rerun (go test -count=N) on the shared server starts fresh workflows.
func request(t *testing.T, customer string, wd time.Weekday, hour int) appointment.Request {
	return appointment.Request{
		IntentID: testsupport.TaskQueue(t), Tenant: "demo", Customer: customer, Service: "tire-change", SlotStart: testsupport.Slot(t, wd, hour),
		Channel: workflows.ChannelAPI, DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa",
		Tuning: workflows.Tuning{MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 3 * time.Second},
	}
}

// effects is what reached the downstream systems for one customer and
// slot, across references (testsupport.Effects says why).
type effects = testsupport.Effects

// effects counts what reached the downstream systems for customer at the
// slot starting at slot, under any reference: the messages at e.fake when
// the test runs the outbox relay, else the outbox rows.
func (e env) effects(t *testing.T, customer string, slot time.Time) effects {
	t.Helper()
	return testsupport.CountEffects(t, e.pool, e.fake, "demo", customer, slot)
}

// messageStates are the states of the outbox messages reserved under ref,
// by kind.
func (e env) messageStates(t *testing.T, ref string) map[string]string {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT kind, state FROM outbox_messages WHERE reference = $1`, ref)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var kind, state string
		require.NoError(t, rows.Scan(&kind, &state))
		out[kind] = state
	}
	require.NoError(t, rows.Err())
	return out
}

func run(t *testing.T, e env, req appointment.Request) (client.WorkflowRun, appointment.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	var st appointment.State
	require.NoError(t, r.Get(ctx, &st))
	return r, st
}

func result(t *testing.T, r client.WorkflowRun) appointment.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var st appointment.State
	require.NoError(t, r.Get(ctx, &st))
	return st
}

// startUntil starts the booking and waits until its call reaches pause;
// what names that call for the failure message.
func (e env) startUntil(ctx context.Context, t *testing.T, req appointment.Request, pause *testsupport.Pause, what string) client.WorkflowRun {
	t.Helper()
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	select {
	case <-pause.Reached():
	case <-ctx.Done():
		t.Fatalf("%s never reached its downstream", what)
	}
	return r
}

var booked = effects{
	Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 1,
}

// shortSteps is a step retry budget of about a second: three attempts.
var shortSteps = workflows.Tuning{
	ActivityAttempts: 3, MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 3 * time.Second,
	CompensationMaxInterval: 200 * time.Millisecond,
}

// endWhen waits until the workflow has ended or cond holds, whichever is
// first.
func endWhen(t *testing.T, r client.WorkflowRun, what string, cond func() bool) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = r.Get(context.Background(), nil)
		close(done)
	}()
	testsupport.Eventually(t, 90*time.Second, what+" (or the workflow ended)", func() bool {
		select {
		case <-done:
			return true
		default:
			return cond()
		}
	})
}

func postSuffix(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, suffix)
	}
}

// reviewCases counts the review cases of a workflow by reason.
func (e env) reviewCases(t *testing.T, workflowID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	rows, err := e.pool.Query(context.Background(), `SELECT reason, count(*) FROM review_cases WHERE workflow_id LIKE '%' || $1 GROUP BY reason`, workflowID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var reason string
		var n int
		require.NoError(t, rows.Scan(&reason, &n))
		out[reason] = n
	}
	require.NoError(t, rows.Err())
	return out
}

func (e env) countOf(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
