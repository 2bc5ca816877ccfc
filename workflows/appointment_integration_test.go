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

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
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
}

func newEnv(t *testing.T, tweak ...func(*config.Config)) env {
	t.Helper()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	for _, f := range tweak {
		f(&cfg)
	}
	e := env{pool: pool, tc: testsupport.Temporal(t), queue: testsupport.TaskQueue(t), cfg: cfg}
	e.calendar = testsupport.NewProxy(t, stacktest.CalendarAPI(t, cfg, pool).URL)
	e.payments = testsupport.NewProxy(t, stacktest.PaymentsAPI(t, cfg, pool).URL)
	e.cfg.CalendarURL, e.cfg.PaymentsURL = e.calendar.URL, e.payments.URL
	return e
}

func (e env) startWorker(t *testing.T) worker.Worker {
	return testsupport.Worker(t, e.tc, e.queue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(e.cfg, e.pool)) })
}

// nextWeekday returns hour:00 Berlin time on the next given weekday, so the
// slot is in the future and inside opening hours.
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

// request is a booking of its own: the intent ID is unique per call, so a
// rerun (go test -count=N) on the shared server starts fresh workflows.
func request(t *testing.T, customer string, wd time.Weekday, hour int) workflows.BookingRequest {
	return workflows.BookingRequest{
		IntentID: testsupport.TaskQueue(t), Tenant: "demo", Customer: customer, Service: "tire-change", SlotStart: nextWeekday(t, wd, hour),
		Channel: workflows.ChannelAPI, DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa",
		Tuning: workflows.Tuning{MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 3 * time.Second},
	}
}

// effects is what reached the downstream systems for one reference.
type effects struct {
	Reservations map[string]int // status -> count
	Intents      map[string]int // status -> count
	Captured     int64
	Refunds      int
	Messages     int
}

func (e env) effects(t *testing.T, ref string) effects {
	t.Helper()
	ctx := context.Background()
	out := effects{Reservations: map[string]int{}, Intents: map[string]int{}}
	group := func(sql string, into map[string]int) {
		rows, err := e.pool.Query(ctx, sql, ref)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var s string
			var n int
			require.NoError(t, rows.Scan(&s, &n))
			into[s] = n
		}
		require.NoError(t, rows.Err())
	}
	group(`SELECT status, count(*) FROM calendar_reservations WHERE reference = $1 GROUP BY status`, out.Reservations)
	group(`SELECT status, count(*) FROM payment_intents WHERE booking_reference = $1 GROUP BY status`, out.Intents)
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(amount_captured), 0) FROM payment_intents WHERE booking_reference = $1`, ref).Scan(&out.Captured))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, ref).Scan(&out.Refunds))
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE reference = $1`, ref).Scan(&out.Messages))
	return out
}

func run(t *testing.T, e env, req workflows.BookingRequest) (client.WorkflowRun, workflows.BookingState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	var st workflows.BookingState
	require.NoError(t, r.Get(ctx, &st))
	return r, st
}

// startUntil starts the booking and waits until its call reaches pause;
// what names that call for the failure message.
func (e env) startUntil(ctx context.Context, t *testing.T, req workflows.BookingRequest, pause *testsupport.Pause, what string) client.WorkflowRun {
	t.Helper()
	r, _, err := workflows.StartAppointment(ctx, e.tc, e.queue, req)
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

func TestHappyPathOneOfEachAndSecondStartIsNoOp(t *testing.T) {
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Tuesday, 14)
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, r.GetID(), st.Reference)
	require.Equal(t, workflows.PaymentCaptured, st.Payment)
	require.NotEmpty(t, st.MessageID)
	names := []string{}
	keys := map[string]bool{}
	for _, s := range st.Steps {
		names = append(names, s.Name)
		require.Regexp(t, `^bko1_[0-9a-f]{48}$`, s.Key)
		require.NotEmpty(t, s.DownstreamID, s.Name)
		keys[s.Key] = true
	}
	require.Equal(t, []string{"hold slot", "authorize deposit (payment saga)", "confirm hold", "capture deposit (payment saga)", "send confirmation"}, names)
	require.Len(t, keys, len(st.Steps), "every step has its own key")
	require.Equal(t, booked, e.effects(t, r.GetID()))

	again, existing, err := workflows.StartAppointment(context.Background(), e.tc, e.queue, req)
	require.NoError(t, err)
	require.True(t, existing)
	require.Equal(t, r.GetRunID(), again.GetRunID())
	require.Equal(t, booked, e.effects(t, r.GetID()))

	q := fmt.Sprintf(`WorkflowId = %q AND CustomerPhone = "+4915112345678" AND BookingStatus = "Confirmed" AND Service = "tire-change"`, r.GetID())
	testsupport.Eventually(t, 20*time.Second, "the Web UI filter to find the booking", func() bool {
		resp, err := e.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		return err == nil && len(resp.GetExecutions()) == 1
	})
}

func TestSlotTakenIsRejectedWithAlternatives(t *testing.T) {
	e := newEnv(t)
	e.startWorker(t)
	first := request(t, "+4915112345678", time.Wednesday, 10)
	first.ResourceID = "bay-1"
	second := first
	second.Customer = "+4915199999999"
	second.IntentID = first.IntentID + "-second"
	r1, st1 := run(t, e, first)
	require.Equal(t, workflows.StatusConfirmed, st1.Status, st1.Reason)
	r2, st2 := run(t, e, second)
	require.Equal(t, workflows.StatusRejected, st2.Status)
	require.Equal(t, "slot_unavailable", st2.Reason)
	require.NotEmpty(t, st2.Alternatives)
	// Nothing held or charged; one message, offering the free slots.
	require.Equal(t, effects{Reservations: map[string]int{}, Intents: map[string]int{}, Messages: 1}, e.effects(t, r2.GetID()))
	var kind, body string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT kind, body FROM outbox_messages WHERE reference = $1`, r2.GetID()).Scan(&kind, &body))
	require.Equal(t, "alternatives", kind)
	for _, alt := range st2.Alternatives {
		require.Contains(t, body, alt.In(time.UTC).Format("02.01.2006 15:04"), "the loser is told every free slot")
	}
	require.Equal(t, booked, e.effects(t, r1.GetID()))
}

func TestDeclinedPaymentReleasesHold(t *testing.T) {
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Thursday, 9)
	req.PaymentMethod = "pm_card_chargeDeclined"
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusPaymentFailed, st.Status)
	require.Equal(t, "card_declined", st.Reason)
	got := e.effects(t, r.GetID())
	require.Equal(t, map[string]int{"released": 1}, got.Reservations)
	require.Zero(t, got.Intents["requires_capture"]+got.Intents["succeeded"], "no live authorisation")
	require.Zero(t, got.Messages)
}

func TestCancelWhileDepositIsAuthorising(t *testing.T) {
	cases := []struct {
		name   string
		cancel func(ctx context.Context, e env, r client.WorkflowRun) error
	}{
		{"customer signal", func(ctx context.Context, e env, r client.WorkflowRun) error {
			return e.tc.SignalWorkflow(ctx, r.GetID(), "", workflows.SignalCancel, nil)
		}},
		{"workflow cancellation", func(ctx context.Context, e env, r client.WorkflowRun) error {
			return e.tc.CancelWorkflow(ctx, r.GetID(), "")
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.startWorker(t)
			pause := e.payments.PauseAt("POST", "/v1/payment_intents", false)
			req := request(t, fmt.Sprintf("+491511234567%d", i), time.Friday, 11)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r := e.startUntil(ctx, t, req, pause, "the authorisation")
			require.NoError(t, tc.cancel(ctx, e, r))
			pause.Release() // the authorisation now lands, after the cancellation
			var st workflows.BookingState
			require.NoError(t, r.Get(ctx, &st))
			require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
			// The child finishes its void before the appointment closes.
			testsupport.Eventually(t, 30*time.Second, "the authorisation voided", func() bool {
				return e.effects(t, r.GetID()).Intents["canceled"] == 1
			})
			got := e.effects(t, r.GetID())
			require.Equal(t, map[string]int{"released": 1}, got.Reservations)
			require.Equal(t, map[string]int{"canceled": 1}, got.Intents, "the authorisation that raced the cancel is voided")
			require.Zero(t, got.Messages)
		})
	}
}

func TestHoldExpiredTwiceIsRejectedAndCompensated(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.HoldTTL = time.Millisecond })
	e.startWorker(t)
	r, st := run(t, e, request(t, "+4915112345678", time.Monday, 15))
	require.Equal(t, workflows.StatusRejected, st.Status)
	require.Equal(t, "hold_expired", st.Reason)
	got := e.effects(t, r.GetID())
	require.Equal(t, map[string]int{"expired": 2}, got.Reservations, "one re-hold, then give up")
	require.Equal(t, map[string]int{"canceled": 1}, got.Intents)
	require.Zero(t, got.Messages)
}

// TestResetReusesHoldAndAuthorisation resets a finished booking to its
// first workflow task: the new run has a new run ID and so new keys, yet
// the business reference makes the calendar and the payment API answer
// with the hold and the authorisation the first run made.
func TestResetReusesHoldAndAuthorisation(t *testing.T) {
	e := newEnv(t)
	e.startWorker(t)
	r, st := run(t, e, request(t, "+4915112345678", time.Tuesday, 10))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var st2 workflows.BookingState
	require.NoError(t, e.reset(t, r, firstWorkflowTaskCompleted(t, e.tc, r)).Get(ctx, &st2))
	require.Equal(t, workflows.StatusConfirmed, st2.Status, st2.Reason)
	require.Equal(t, st.HoldID, st2.HoldID, "the reset run found its hold")
	require.Equal(t, st.IntentID, st2.IntentID, "the reset run found its authorisation")
	require.NotEqual(t, st.Steps[0].Key, st2.Steps[0].Key, "new run, new keys")
	require.Equal(t, booked, e.effects(t, r.GetID()))
}

// TestMatrix07WorkerKilledBeforeReporting proves failure-matrix item 7 (an
// activity finishes its external call and the worker is killed before
// reporting completion): the hold commits in the calendar, the worker is
// stopped before the answer arrives; a new worker retries with the same key
// and the calendar replays. One reservation, one captured deposit, one
// confirmation row.
func TestMatrix07WorkerKilledBeforeReporting(t *testing.T) {
	e := newEnv(t)
	pause := e.calendar.PauseAt("POST", "/v1/holds", true)
	pause.Drop = true
	w1 := e.startWorker(t)
	req := request(t, "+4915112345678", time.Wednesday, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := e.startUntil(ctx, t, req, pause, "the hold")
	require.Equal(t, map[string]int{"held": 1}, e.effects(t, r.GetID()).Reservations, "committed before the worker died")
	w1.Stop()
	pause.Release()
	e.startWorker(t)
	var st workflows.BookingState
	require.NoError(t, r.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Greater(t, st.Steps[0].Attempt, int32(1), "the hold succeeded on a retry")
	require.Equal(t, booked, e.effects(t, r.GetID()))
	var replays int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT replays FROM idempotency_keys WHERE idempotency_key = $1`, st.Steps[0].Key).Scan(&replays))
	require.Positive(t, replays, "the retry was answered from the stored response")
}
