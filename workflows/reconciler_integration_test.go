package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
	"github.com/bookonce/bookonce/workflows/reconciler"
)

// startWorkerWithReconciler is startWorker plus the reconciler, wired as
// the worker process wires it.
func (e env) startWorkerWithReconciler(t *testing.T) worker.Worker {
	return testsupport.Worker(t, e.tc, e.queue, func(r worker.Registry) {
		reg := testsupport.Tenants(t, e.pool)
		acts := stack.NewActivities(e.cfg, e.pool, reg, e.tc)
		stack.Register(r, acts)
		reconciler.Register(r, stack.NewReconciler(acts, e.tc, reg))
	})
}

// reconcile runs one sweep, as the schedule would start it (over every
// tenant of the registry: the demo tenant here), and waits.
func (e env) reconcile(t *testing.T) reconciler.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "reconciler-" + testsupport.TaskQueue(t), TaskQueue: e.queue},
		reconciler.WorkflowName, reconciler.Input{AllTenants: true,
			Tuning: workflows.Tuning{MaxRetryInterval: 200 * time.Millisecond, ActivityTimeout: 10 * time.Second}})
	require.NoError(t, err)
	var res reconciler.Result
	require.NoError(t, r.Get(ctx, &res))
	return res
}

// blockCaptures forwards to upstream but holds every capture until the
// caller gives up (the worker's activity deadline) or the test ends: the
// capture never reaches the payment API.
func blockCaptures(t *testing.T, upstream string) (front string, reached <-chan struct{}) {
	u, err := url.Parse(upstream)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	hit := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/capture") {
			once.Do(func() { close(hit) })
			select {
			case <-r.Context().Done():
			case <-done:
			}
			http.Error(w, "held by the test", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: unblocks srv.Close
	return srv.URL, hit
}

// repairsCounted reads bookonce_reconciler_repairs_total by kind. The
// counter is process-wide and read as a difference, so the tests in this
// file do not run in parallel (every other integration test does).
func repairsCounted() map[string]float64 {
	out := map[string]float64{}
	for _, k := range []string{activities.RepairReleaseHold, activities.RepairVoidAuthorisation, activities.RepairCancelBooking, activities.RepairReview} {
		out[k] = testutil.ToFloat64(activities.ReconcilerRepairs(k))
	}
	return out
}

// TestMatrix13TerminatedBookingLeavesNothingBehind proves failure-matrix
// item 13 (an operator terminates an appointment mid-saga; its payment
// child is terminated with it, so neither runs a compensation): one
// reconciler sweep releases the hold, voids the authorisation and cancels
// the booking nobody paid for, hands a booking whose deposit was captured
// to a person, counts each repair, and a second sweep finds nothing left. Asserted on calendar_reservations and
// payment_intents rows, and review_cases.
func TestMatrix13TerminatedBookingLeavesNothingBehind(t *testing.T) {
	cases := []struct {
		name string
		// arm prepares the stack and returns the moment to terminate at.
		arm       func(t *testing.T, e *env) <-chan struct{}
		customer  string
		noDeposit bool
		before    effects
		after     effects
		repairs   map[string]int
		reviews   int // orphaned_effect cases opened
	}{
		{
			name: "while authorising: authorisation landed, child terminated",
			arm: func(t *testing.T, e *env) <-chan struct{} {
				// The authorisation commits; its answer waits until the
				// appointment and its payment child are terminated.
				p := e.payments.PauseAt("POST", "/v1/payment_intents", true)
				t.Cleanup(p.Release)
				return p.Reached()
			},
			customer: "+4915112340013",
			before:   effects{Reservations: map[string]int{"held": 1}, Intents: map[string]int{"requires_capture": 1}},
			after:    effects{Reservations: map[string]int{"released": 1}, Intents: map[string]int{"canceled": 1}},
			repairs:  map[string]int{activities.RepairReleaseHold: 1, activities.RepairVoidAuthorisation: 1},
		},
		{
			name: "between confirm and capture: booking confirmed, deposit only authorised",
			arm: func(t *testing.T, e *env) <-chan struct{} {
				front, reached := blockCaptures(t, e.cfg.PaymentsURL)
				e.cfg.PaymentsURL = front
				return reached
			},
			customer: "+4915112340014",
			before:   effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"requires_capture": 1}},
			after:    effects{Reservations: map[string]int{"cancelled": 1}, Intents: map[string]int{"canceled": 1}},
			repairs:  map[string]int{activities.RepairCancelBooking: 1, activities.RepairVoidAuthorisation: 1},
		},
		{
			name: "after the capture, before the confirmation: money taken, a person decides",
			arm: func(t *testing.T, e *env) <-chan struct{} {
				// The capture commits; its answer waits until the
				// appointment is terminated.
				p := e.payments.PauseAt("POST", "/v1/payment_intents/", true)
				t.Cleanup(p.Release)
				return p.Reached()
			},
			customer: "+4915112340015",
			before:   effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000},
			after:    effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000},
			repairs:  map[string]int{activities.RepairReview: 1},
			reviews:  1,
		},
		{
			name: "no deposit, confirmed, terminated before the confirmation: the customer may know, a person decides",
			arm: func(t *testing.T, e *env) <-chan struct{} {
				// The confirm commits; its answer waits until the
				// appointment is terminated. Nothing else stands between
				// the booking and the confirmation message.
				p := e.calendar.PauseAt("POST", "/v1/holds/", true)
				t.Cleanup(p.Release)
				return p.Reached()
			},
			customer:  "+4915112340017",
			noDeposit: true,
			before:    effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{}},
			after:     effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{}},
			repairs:   map[string]int{activities.RepairReview: 1},
			reviews:   1,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			at := tc.arm(t, &e)
			e.startWorkerWithReconciler(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			req := request(t, tc.customer, time.Monday+time.Weekday(i), 12)
			if tc.noDeposit {
				req.DepositAmount = 0
			}
			r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
			require.NoError(t, err)
			select {
			case <-at:
			case <-ctx.Done():
				t.Fatal("the saga never reached the step to terminate at")
			}
			require.NoError(t, e.tc.TerminateWorkflow(ctx, r.GetID(), "", "test: an operator terminates the booking"))
			require.Equal(t, tc.before, e.effects(t, req.Customer, req.SlotStart), "the terminated saga left its effects behind")

			counted := repairsCounted()
			first := e.reconcile(t)
			require.Equal(t, tc.repairs, first.Repairs, "first sweep: %+v", first)
			require.Empty(t, first.Failed)
			require.Equal(t, tc.after, e.effects(t, req.Customer, req.SlotStart), "nothing live is left")
			for kind, n := range tc.repairs {
				require.Equal(t, float64(n), repairsCounted()[kind]-counted[kind], "bookonce_reconciler_repairs_total{kind=%q}", kind)
			}
			var cases int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM review_cases WHERE workflow_id = $1 AND reason = 'orphaned_effect' AND status = 'open'`,
				r.GetID()).Scan(&cases))
			require.Equal(t, tc.reviews, cases, "an unpaid booking is cancelled; a paid one goes to a person")

			second := e.reconcile(t)
			require.Empty(t, second.Repairs, "the second sweep repairs nothing: %+v", second)
			require.Zero(t, second.Unchanged)
			require.Equal(t, tc.after, e.effects(t, req.Customer, req.SlotStart))
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM review_cases WHERE workflow_id = $1`, r.GetID()).Scan(&cases))
			require.Equal(t, tc.reviews, cases, "the second sweep opens no second case")
		})
	}
}

// TestReconcilerReleasesHoldsOfMissingSagasOnly: a hold under a saga's
// reference whose workflow never existed is released; a hold the front
// desk placed under its own reference, and a booking whose saga is missing
// (a person must decide), are not undone.
func TestReconcilerReleasesHoldsOfMissingSagasOnly(t *testing.T) {
	e := newEnv(t)
	e.startWorkerWithReconciler(t)
	ctx := context.Background()
	tok, ok := e.cfg.TokenFor("demo")
	require.True(t, ok)
	cal := calendar.NewClient(e.cfg.CalendarURL, tok)
	ghost := appointment.WorkflowID("demo", "ghost-"+testsupport.TaskQueue(t))
	ghostBooked := ghost + "-booked"
	desk := "desk-" + testsupport.TaskQueue(t)
	const customer = "+4915112340016"
	hold := func(ref string, hour int) calendar.Hold {
		h, err := cal.CreateHold(ctx, "k-"+ref, calendar.HoldRequest{Service: "tire-change", Start: testsupport.Slot(t, time.Tuesday, hour), Customer: customer, Reference: ref})
		require.NoError(t, err)
		return h
	}
	hold(ghost, 9)
	hold(desk, 10)
	_, err := cal.ConfirmHold(ctx, "k-confirm", hold(ghostBooked, 11).ID)
	require.NoError(t, err)

	res := e.reconcile(t)
	require.Equal(t, map[string]int{activities.RepairReleaseHold: 1, activities.RepairReview: 1}, res.Repairs)
	require.Equal(t, effects{Reservations: map[string]int{"released": 1}, Intents: map[string]int{}}, e.effects(t, customer, testsupport.Slot(t, time.Tuesday, 9)))
	require.Equal(t, map[string]int{"held": 1}, e.effects(t, customer, testsupport.Slot(t, time.Tuesday, 10)).Reservations, "not a saga's reference")
	require.Equal(t, map[string]int{"confirmed": 1}, e.effects(t, customer, testsupport.Slot(t, time.Tuesday, 11)).Reservations, "a person decides")
	var reason string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT reason FROM review_cases WHERE workflow_id = $1 AND status = 'open'`, ghostBooked).Scan(&reason))
	require.Equal(t, "orphaned_effect", reason)
	require.Empty(t, e.reconcile(t).Repairs, "the second sweep repairs nothing")
}

// endedSagaWithCapturedDeposit runs a saga that ends without a booking
// (the card is declined) and leaves a captured deposit under its
// reference, as a void behind a lagging search used to; it returns the
// saga's reference.
func (e env) endedSagaWithCapturedDeposit(t *testing.T, customer string, wd time.Weekday, hour int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req := request(t, customer, wd, hour)
	req.PaymentMethod = "pm_card_chargeDeclined"
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusPaymentFailed, st.Status, st.Reason)
	g, err := stack.NewActivities(e.cfg, e.pool, testsupport.Tenants(t, e.pool), nil).Payments("demo")
	require.NoError(t, err)
	pi, err := g.Authorize(ctx, "test-left-behind-"+r.GetID(), payments.Authorization{
		Amount: 2000, Currency: "eur", Reference: r.GetID(), Step: activities.DepositStep, PaymentMethod: "pm_card_visa"})
	require.NoError(t, err)
	_, err = g.Capture(ctx, "test-left-behind-capture-"+r.GetID(), pi.ID)
	require.NoError(t, err)
	return r.GetID()
}

// TestReconcilerRefundsCapturedDepositOfEndedSaga: money captured under
// the reference of a saga that ended without a booking (what a void
// compensation behind a lagging search used to leave) is refunded by the
// sweep, once: the second sweep finds nothing left to give back.
func TestReconcilerRefundsCapturedDepositOfEndedSaga(t *testing.T) {
	e := newEnv(t)
	e.startWorkerWithReconciler(t)
	const customer = "+4915112340019"
	e.endedSagaWithCapturedDeposit(t, customer, time.Wednesday, 13)
	slot := testsupport.Slot(t, time.Wednesday, 13)

	first := e.reconcile(t)
	require.Equal(t, map[string]int{activities.RepairRefundDeposit: 1}, first.Repairs, "first sweep: %+v", first)
	require.Empty(t, first.Failed)
	require.Equal(t, 1, e.effects(t, customer, slot).Refunds)
	second := e.reconcile(t)
	require.Empty(t, second.Repairs, "nothing left to give back: %+v", second)
	require.Equal(t, 1, e.effects(t, customer, slot).Refunds)
}

// TestReconcilerKeepsTheDepositOfAMovedBookingThatStands: a booking its
// lifecycle moved sits under "<saga>#move-n", its deposit under the
// saga's own reference. A sweep that grouped by the raw reference met
// the deposit without a booking and refunded it while the moved booking
// stood (#48 item 5). Grouped by the saga, the booking is found: nothing
// is refunded or cancelled, and, the saga having ended without confirming,
// a person gets the case.
func TestReconcilerKeepsTheDepositOfAMovedBookingThatStands(t *testing.T) {
	e := newEnv(t)
	e.startWorkerWithReconciler(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const customer = "+4915112340042"
	ref := e.endedSagaWithCapturedDeposit(t, customer, time.Wednesday, 14)
	tok, ok := e.cfg.TokenFor("demo")
	require.True(t, ok)
	cal := calendar.NewClient(e.cfg.CalendarURL, tok)
	moved := lifecycle.MoveReference(ref, 1)
	to := testsupport.Slot(t, time.Friday, 10)
	h, err := cal.CreateHold(ctx, "k-"+moved, calendar.HoldRequest{Service: "tire-change", Start: to, Customer: customer, Reference: moved})
	require.NoError(t, err)
	_, err = cal.ConfirmHold(ctx, "k-confirm-"+moved, h.ID)
	require.NoError(t, err)

	res := e.reconcile(t)
	require.Equal(t, map[string]int{activities.RepairReview: 1}, res.Repairs, "a person decides: %+v", res)
	require.Zero(t, e.effects(t, customer, testsupport.Slot(t, time.Wednesday, 14)).Refunds, "the deposit of the booking that stands is kept")
	require.Equal(t, map[string]int{"confirmed": 1}, e.effects(t, customer, to).Reservations)
	var reason string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT reason FROM review_cases WHERE workflow_id = $1 AND status = 'open'`, ref).Scan(&reason))
	require.Equal(t, "orphaned_effect", reason)
}

// TestReconcilerLeavesConfirmedSagasAloneFromOneListing: a sweep used to
// describe the saga of every booking confirmed within its look-back, one
// by one (20,000 confirmations a day were 20,000 describes every five
// minutes). One visibility listing now shows those sagas completed as
// confirmed, and the sweep leaves them alone without describing them; a
// saga that ended without a booking but left a captured deposit is still
// described and its deposit refunded.
func TestReconcilerLeavesConfirmedSagasAloneFromOneListing(t *testing.T) {
	e := newEnv(t)
	e.startWorkerWithReconciler(t)
	const customer = "+4915112340053"
	var confirmed []string
	for _, hour := range []int{9, 10} {
		r, st := run(t, e, request(t, customer, time.Thursday, hour))
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		confirmed = append(confirmed, r.GetID())
	}
	// Visibility follows the workflows asynchronously: the sweep is run
	// once it shows both as the listing will read them.
	q := fmt.Sprintf("WorkflowId IN (%q, %q) AND ExecutionStatus = 'Completed' AND %s = %q",
		confirmed[0], confirmed[1], workflows.BookingStatusKey.GetName(), workflows.StatusConfirmed)
	testsupport.Eventually(t, 30*time.Second, "both sagas visible as confirmed", func() bool {
		n, err := e.tc.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{Query: q})
		require.NoError(t, err)
		return n.GetCount() == 2
	})
	const other = "+4915112340054"
	e.endedSagaWithCapturedDeposit(t, other, time.Thursday, 11)

	res := e.reconcile(t)
	require.Equal(t, 2, res.Settled, "both confirmed bookings left alone from the listing: %+v", res)
	require.Equal(t, map[string]int{activities.RepairRefundDeposit: 1}, res.Repairs, "the ended saga described and repaired: %+v", res)
	require.Equal(t, 1, e.effects(t, other, testsupport.Slot(t, time.Thursday, 11)).Refunds)
	for _, hour := range []int{9, 10} {
		got := e.effects(t, customer, testsupport.Slot(t, time.Thursday, hour))
		require.Equal(t, map[string]int{"confirmed": 1}, got.Reservations, "the booking at %d stands", hour)
		require.Zero(t, got.Refunds, "its deposit kept")
	}
}
