package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// ---- item 4: end to end -----------------------------------------------

// Variant names of item 4.
const (
	e2eSaga = "booking: signed webhook -> conversation -> appointment + payment saga -> Confirmed"
	e2eBare = "bare: SignalWithStart -> same workflow shape, no-op activities -> completed"
)

// e2eEnv is the whole stack in one process, as `make run` wires it: the
// calendar and payment APIs (with their idempotency stores and the
// production key quota), the worker with every workflow and activity, and
// the gateway; plus a worker for the bare workflows on its own queue of
// the same server.
type e2eEnv struct {
	cfg   config.Config
	pool  *pgxpool.Pool
	tc    client.Client
	sim   twilio.Simulator
	gwReg *prometheus.Registry // the gateway's metrics
	// staffURL serves the gateway's staff routes (ADMIN_LISTEN): the
	// booking API that cancels and moves.
	staffURL string
	// slots > 0 books slot seq%slots, so that a long run reuses slots
	// (the calendar then takes the next free resource); 0: slot seq.
	slots int
	// lookEvery is how often, at most, bookingOp looks for the booking's
	// appointment (awaitResultEvery); 0 is awaitResult's 25 ms.
	lookEvery time.Duration
	bareQueue string
	base      int
}

func newE2EEnv(t *testing.T) e2eEnv {
	e := newStackEnv(t, func(tc client.Client, cfg config.Config, pool *pgxpool.Pool) {
		testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) {
			stack.Register(r, stack.NewActivities(cfg, pool, testsupport.Tenants(t, pool), tc))
		})
	})
	e.bareQueue = testsupport.TaskQueue(t)
	testsupport.Worker(t, e.tc, e.bareQueue, registerBare)
	return e
}

// newStackEnv is the whole stack in one process with the worker that
// startWorker starts on cfg.TaskQueue, on the tests' in-memory server.
func newStackEnv(t *testing.T, startWorker func(tc client.Client, cfg config.Config, pool *pgxpool.Pool)) e2eEnv {
	return newStackEnvOn(t, temporaltest.Temporal(t), startWorker)
}

// newStackEnvOn is newStackEnv on the Temporal server tc talks to;
// prepare, if any, changes the configuration and the database before
// anything is served.
func newStackEnvOn(t *testing.T, tc client.Client, startWorker func(tc client.Client, cfg config.Config, pool *pgxpool.Pool), prepare ...func(*env)) e2eEnv {
	e := newEnv(t)
	seedResources(t, e.pool)
	for _, p := range prepare {
		p(&e)
	}
	cfg := e.cfg
	log := stack.Logger(cfg, io.Discard)
	cal, _ := stack.CalendarService(cfg, e.pool, testsupport.Tenants(t, e.pool), log)
	pay, _ := stack.PaymentsService(cfg, e.pool, testsupport.Tenants(t, e.pool), log)
	calSrv, paySrv := httptest.NewServer(cal.Mux()), httptest.NewServer(pay.Mux())
	t.Cleanup(calSrv.Close)
	t.Cleanup(paySrv.Close)
	cfg.CalendarURL, cfg.PaymentsURL = calSrv.URL, paySrv.URL
	cfg.TaskQueue = testsupport.TaskQueue(t)
	startWorker(tc, cfg, e.pool)
	gw, gwReg := stack.Gateway(cfg, e.pool, tc, testsupport.Tenants(t, e.pool), log)
	srv, staff := httptest.NewServer(gw.Handler()), httptest.NewServer(gw.AdminHandler())
	t.Cleanup(srv.Close)
	t.Cleanup(staff.Close)
	return e2eEnv{cfg: cfg, pool: e.pool, tc: tc, gwReg: gwReg, staffURL: staff.URL, base: 40_000_000 + rand.IntN(40_000_000),
		sim: twilio.Simulator{GatewayURL: srv.URL, PublicBaseURL: cfg.PublicBaseURL, AuthToken: cfg.TwilioAuthToken, HTTP: newClient()}}
}

// bookingSlot is the seq-th distinct slot a customer asks for: from the
// day after tomorrow on, Monday to Saturday (the catalogue's days),
// 13:00-17:30 every half hour (afternoon times need no am/pm question).
func bookingSlot(tz *time.Location, today time.Time, seq int) time.Time {
	day, n := seq/10, seq%10
	d := time.Date(today.Year(), today.Month(), today.Day()+2, 0, 0, 0, 0, tz)
	for i := 0; ; d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Sunday {
			continue
		}
		if i == day {
			break
		}
		i++
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 13, 0, 0, 0, tz).Add(time.Duration(n) * 30 * time.Minute)
}

func wishText(start time.Time) string {
	return fmt.Sprintf("Reifenwechsel am %d.%d. um %d:%02d Uhr", start.Day(), int(start.Month()), start.Hour(), start.Minute())
}

// bookingOp is one customer writing one wish on WhatsApp; the op ends when
// the appointment's status is Confirmed (its workflow result). The
// appointment's ID is derived the way the conversation derives it, from
// what the extractor reads in the text.
func (e e2eEnv) bookingOp(t testing.TB) Op {
	tz, today := e.cfg.Timezone, time.Now().In(e.cfg.Timezone)
	return func(ctx context.Context, seq int) error {
		slot := seq
		if e.slots > 0 {
			slot = seq % e.slots
		}
		customer, start := phone(e.base, seq), bookingSlot(tz, today, slot)
		text := wishText(start)
		r, err := intent.Rules{}.Extract(ctx, text, time.Now(), tz, intent.DemoCatalogue())
		if err != nil || !r.Start.Equal(start) {
			return fmt.Errorf("the extractor reads %q as %v (%v), want %v", text, r.Start, err, start)
		}
		id := testsupport.AppointmentID(t, config.DefaultTenant, customer, intent.ServiceTireChange, start)
		if err := postWebhook(ctx, e.sim, twilio.WhatsApp(sid(e.base, seq), customer, text)); err != nil {
			return err
		}
		var st appointment.State
		if err := awaitResultEvery(ctx, e.tc, id, &st, max(e.lookEvery, 25*time.Millisecond)); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if st.Status != workflows.StatusConfirmed {
			return fmt.Errorf("%s ended %s: %s", id, st.Status, st.Reason)
		}
		return nil
	}
}

// bareOp signals (and starts) a bare conversation, as the gateway would,
// and ends when the bare appointment has completed.
func (e e2eEnv) bareOp() Op {
	return func(ctx context.Context, seq int) error {
		conv := fmt.Sprintf("bare-customer:%d", e.base+seq)
		appt := fmt.Sprintf("bare-appointment:%d", e.base+seq)
		_, err := e.tc.SignalWithStartWorkflow(ctx, conv, "inbound", seq, client.StartWorkflowOptions{ID: conv, TaskQueue: e.bareQueue},
			BareConversation, bareInput{Appointment: appt})
		if err != nil {
			return err
		}
		var status string
		if err := awaitResult(ctx, e.tc, appt, &status); err != nil {
			return err
		}
		if status != "Confirmed" {
			return fmt.Errorf("%s ended %q", appt, status)
		}
		return nil
	}
}

// awaitResult waits for workflow id to exist (a parent starts it), then
// for its result (a long poll on the server), looking for it every 25 ms.
// Both sides of item 4 wait the same way.
func awaitResult(ctx context.Context, tc client.Client, id string, result any) error {
	return awaitResultEvery(ctx, tc, id, result, 25*time.Millisecond)
}

// awaitResultEvery is awaitResult looking for the workflow every 25 ms at
// first and then less often, up to every longest. With longest above
// 25 ms the op's end is the workflow's close time on the server
// (MarkEnd), so that looking less often costs the load less CPU (under
// an open loop's backlog, hundreds of waiters looking every 25 ms were
// most of the embedded server's work) without blurring the latency.
func awaitResultEvery(ctx context.Context, tc client.Client, id string, result any, longest time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	every := 25 * time.Millisecond
	for {
		err := tc.GetWorkflow(ctx, id, "").Get(ctx, result)
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%s not finished in time: %w", id, ctx.Err())
		}
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			if err == nil && longest > 25*time.Millisecond {
				return markClosed(ctx, tc, id)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never started: %w", id, ctx.Err())
		case <-time.After(every):
		}
		every = min(2*every, longest)
	}
}

// markClosed reads when workflow id closed and marks the op's end there.
func markClosed(ctx context.Context, tc client.Client, id string) error {
	desc, err := tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Errorf("describe %s: %w", id, err)
	}
	closed := desc.GetWorkflowExecutionInfo().GetCloseTime()
	if closed == nil {
		return fmt.Errorf("%s returned a result but has no close time", id)
	}
	MarkEnd(ctx, closed.AsTime())
	return nil
}

type e2eResult struct {
	series  []*series
	shapes  map[string]bookingShapes // "booking", "bare"
	profile map[string]string
}

func measureE2E(t *testing.T, sz sizes) e2eResult {
	e := newE2EEnv(t)
	res := e2eResult{shapes: map[string]bookingShapes{}, profile: map[string]string{}}
	// One booking each first, to warm up.
	warm := Load{Concurrency: 1, Ops: 1, SeqBase: 0}
	r := Run(context.Background(), warm, e.bookingOp(t))
	require.Zero(t, r.Errors, "first booking: %v", r.FirstErr)
	r = Run(context.Background(), warm, e.bareOp())
	require.Zero(t, r.Errors, "first bare booking: %v", r.FirstErr)

	seq, booked := 1, 1
	firstBare := 0
	for _, c := range sz.e2eConcs {
		sg, bw := &series{variant: e2eSaga, conc: c}, &series{variant: e2eBare, conc: c}
		for range sz.reps {
			l := sz.e2eLoad(c)
			l.SeqBase = seq
			r := measure(t, sg, l, e.bookingOp(t))
			seq += r.Ops
			booked += r.Ops
			l.SeqBase = seq
			if firstBare == 0 {
				firstBare = seq
			}
			seq += measure(t, bw, l, e.bareOp()).Ops
		}
		res.series = append(res.series, sg, bw)
	}
	// The engine work of the first measured booking and bare run, from
	// their histories: the bare shape must run as many activities.
	customer, start := phone(e.base, 1), bookingSlot(e.cfg.Timezone, time.Now().In(e.cfg.Timezone), 1)
	res.shapes["booking"] = shapesOf(t, e.tc, testsupport.ConversationID(t, config.DefaultTenant, customer),
		testsupport.AppointmentID(t, config.DefaultTenant, customer, intent.ServiceTireChange, start))
	res.shapes["bare"] = shapesOf(t, e.tc, fmt.Sprintf("bare-customer:%d", e.base+firstBare), fmt.Sprintf("bare-appointment:%d", e.base+firstBare))
	real, bare := res.shapes["booking"], res.shapes["bare"]
	require.Equal(t, real.Conversation.Activities, bare.Conversation.Activities, "conversation activities")
	require.Equal(t, real.Conversation.LocalActivities, bare.Conversation.LocalActivities, "conversation local activities")
	require.Equal(t, real.Appointment.Activities, bare.Appointment.Activities, "appointment activities")
	require.Equal(t, real.Appointment.Children+real.Conversation.Children, bare.Appointment.Children+bare.Conversation.Children, "child workflows")
	// Effects: exactly one confirmed reservation, one captured deposit and
	// one confirmation per booking, and one inbox row per webhook.
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE status = 'confirmed'`))
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations`))
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM payment_intents WHERE status = 'succeeded'`))
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM payment_intents`))
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM outbox_messages WHERE kind = 'confirmation'`))
	require.Equal(t, booked, countRows(t, e.pool, `SELECT count(*) FROM inbox_events`))

	c := sz.e2eConcs[len(sz.e2eConcs)-1]
	l := sz.e2eLoad(c)
	l.SeqBase = seq
	if p := profiled(t, sz.profile, "e2e-booking", l, e.bookingOp(t)); p != "" {
		res.profile[fmt.Sprintf("bookings through webhooks, c=%d", c)] = p
	}
	return res
}
