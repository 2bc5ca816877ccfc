package channels_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/stack/stacktest"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// cancelEnv is the whole stack with card deposits: the APIs, a worker,
// the gateway and the outbox sender to a fake Twilio.
type cancelEnv struct {
	env
	queue  string
	twilio *twilio.FakeServer
	// calendar is the calendar API's URL.
	calendar string
}

func newCancelEnv(t *testing.T) cancelEnv {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.TaskQueue = testsupport.TaskQueue(t)
	cfg.CalendarURL, cfg.PaymentsURL = stacktest.CalendarAPI(t, cfg, pool).URL, stacktest.PaymentsAPI(t, cfg, pool).URL
	tc := temporaltest.Temporal(t)
	registry := testsupport.Tenants(t, pool)
	log := stack.Logger(cfg, testLog{t})
	testsupport.Worker(t, tc, cfg.TaskQueue, func(r worker.Registry) { stack.Register(r, stack.NewActivities(cfg, pool, registry, tc)) })
	gw, reg := stack.Gateway(cfg, pool, tc, registry, log)
	srv, admin := serveGateway(t, gw)

	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	sender := stack.OutboxSender(cfg, pool, twilio.New(fake.AccountSID, fake.AuthToken, "+4930123456", twilio.WithBaseURL(fake.URL())), log)
	done := make(chan struct{})
	go func() { defer close(done); _ = sender.Run(ctx, 100*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done })
	return cancelEnv{env: env{pool: pool, tc: tc, reg: reg, gw: gw, url: srv.URL, admin: admin.URL}, queue: cfg.TaskQueue, twilio: fake, calendar: cfg.CalendarURL}
}

// book books customer's tire change with a card deposit and waits until
// it is confirmed and handed to its lifecycle.
func (e cancelEnv) book(t *testing.T, customer string) string {
	t.Helper()
	return e.bookWithWindow(t, customer, 0)
}

// bookWithWindow books as book does, under the tenant's cancellation
// window (0: the tenant's own): a window longer than the lead makes every
// cancel one that keeps the deposit, whatever the day the test runs.
func (e cancelEnv) bookWithWindow(t *testing.T, customer string, window time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	run, _, err := appointment.Start(ctx, e.tc, e.queue, appointment.Request{
		IntentID: testsupport.TaskQueue(t), Tenant: "demo", Customer: customer, Service: "tire-change",
		SlotStart: testsupport.NextWeekdayAfter(t, time.Wednesday, 11, 48*time.Hour), Channel: workflows.ChannelWhatsApp,
		DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa", Timezone: "Europe/Berlin",
		Tuning: workflows.Tuning{MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 3 * time.Second},
		Terms:  terms(window),
	})
	require.NoError(t, err)
	var st appointment.State
	require.NoError(t, run.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, lifecycle.WorkflowID(run.GetID()), st.Lifecycle)
	return run.GetID()
}

// terms is the tenant's terms with the cancellation window window; nil
// (the tenant's own) for 0.
func terms(window time.Duration) *tenants.Terms {
	if window == 0 {
		return nil
	}
	return &tenants.Terms{Language: "de", CancellationWindow: window}
}

// cancel posts the cancellation and returns the status and the body.
func (e cancelEnv) cancel(t *testing.T, id, key, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.admin+"/v1/appointments/"+id+"/cancel", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data), resp.Header
}

// TestCancelThroughTheAPIRefundsOnce: a booking cancelled through the API
// twice with the same Idempotency-Key and once with another: one
// cancelled booking in the calendar, one refund at the payment API, one
// cancellation message at Twilio, and the same answer every time.
func TestCancelThroughTheAPIRefundsOnce(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	customer := newCustomer()
	id := e.book(t, customer)

	var answers []lifecycle.State
	for _, key := range []string{"key-1", "key-1", "key-2"} {
		code, body, _ := e.cancel(t, id, key, `{"reason": "customer called"}`)
		require.Equal(t, http.StatusOK, code, body)
		var st lifecycle.State
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		answers = append(answers, st)
	}
	require.Equal(t, workflows.StatusCancelled, answers[0].Status, answers[0].Reason)
	require.Equal(t, lifecycle.DepositRefunded, answers[0].Deposit)
	require.NotEmpty(t, answers[0].RefundID)
	require.Equal(t, answers[0], answers[1], "the same key: the first answer")
	require.Equal(t, answers[0], answers[2], "another key: the same state, nothing done again")

	ctx := context.Background()
	var bookings, cancelled int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'cancelled')
		FROM calendar_reservations WHERE reference = $1 AND booking_id IS NOT NULL`, id).Scan(&bookings, &cancelled))
	require.Equal(t, 1, bookings, "one booking in the calendar")
	require.Equal(t, 1, cancelled, "and it is cancelled")
	var refunds int
	var refunded int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(r.amount), 0) FROM refunds r
		JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id).Scan(&refunds, &refunded))
	require.Equal(t, 1, refunds, "one refund at the payment API")
	require.Equal(t, int64(2000), refunded, "the deposit in full")

	testsupport.Eventually(t, 60*time.Second, "the confirmation and the cancellation delivered", func() bool {
		var n, sent int
		err := e.pool.QueryRow(ctx, `SELECT count(*), count(provider_id) FROM outbox_messages WHERE reference = $1`, id).Scan(&n, &sent)
		return err == nil && n == 2 && sent == 2
	})
	stornos := 0
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) && strings.Contains(m.Body, "ist storniert") {
			stornos++
			require.Contains(t, m.Body, "20,00 €")
		}
	}
	require.Equal(t, 1, stornos, "one cancellation message at Twilio")
}

// TestCancelAPIRefusesBadInput: what the API answers before any
// workflow is asked, and for an appointment it does not know.
func TestCancelAPIRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	cases := []struct {
		name, id, key, body string
		code                int
		problem             string
	}{
		{"no Idempotency-Key", "appointment:demo:x", "", "", http.StatusBadRequest, "idempotency_key_required"},
		{"key too long", "appointment:demo:x", strings.Repeat("k", 256), "", http.StatusBadRequest, "idempotency_key_required"},
		{"malformed body", "appointment:demo:x", "k", `{"reason": 1}`, http.StatusBadRequest, "invalid_request"},
		{"unknown field", "appointment:demo:x", "k", `{"why": "x"}`, http.StatusBadRequest, "invalid_request"},
		{"another tenant's appointment", "appointment:other:x", "k", "", http.StatusNotFound, "not_found"},
		{"no such appointment", "appointment:demo:nonexistent", "k", "", http.StatusNotFound, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, header := e.cancel(t, tc.id, tc.key, tc.body)
			require.Equal(t, tc.code, code, body)
			require.Equal(t, "application/problem+json", header.Get("Content-Type"))
			require.Contains(t, body, `"code":"`+tc.problem+`"`)
		})
	}
}

// TestCancelAPIHonoursTheDepositFlags: inside the tenant's cancellation
// window a cancel keeps the deposit; only_if_refunded then cancels
// nothing (409 deposit_would_be_kept), refund_in_full refunds it. Counted
// in the calendar and at the payment API. Before, both flags were read
// and dropped: the booking was cancelled and the deposit kept.
func TestCancelAPIHonoursTheDepositFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		code       int
		problem    string
		calendar   string // the booking's status in the calendar after
		refunded   int64
	}{
		{name: "no flag: cancelled, the deposit kept", body: `{"reason": "late"}`, code: http.StatusOK, calendar: "cancelled"},
		{name: "only_if_refunded: nothing cancelled", body: `{"reason": "late", "only_if_refunded": true}`,
			code: http.StatusConflict, problem: "deposit_would_be_kept", calendar: "confirmed"},
		{name: "refund_in_full: cancelled and refunded", body: `{"reason": "goodwill", "refund_in_full": true}`,
			code: http.StatusOK, calendar: "cancelled", refunded: 2000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCancelEnv(t) // a calendar of its own: every case books the same slot
			id := e.bookWithWindow(t, newCustomer(), 30*24*time.Hour)
			code, body, _ := e.cancel(t, id, "key-1", tc.body)
			require.Equal(t, tc.code, code, body)
			if tc.problem != "" {
				require.Contains(t, body, `"code":"`+tc.problem+`"`)
			}
			ctx := context.Background()
			var status string
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT status FROM calendar_reservations
				WHERE reference = $1 AND booking_id IS NOT NULL`, id).Scan(&status))
			require.Equal(t, tc.calendar, status)
			var refunded int64
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(r.amount), 0) FROM refunds r
				JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id).Scan(&refunded))
			require.Equal(t, tc.refunded, refunded)
		})
	}
}
