package workflows_test

// Integration tests of AppointmentWorkflow on the real stack: a booking,
// a taken slot, a declined card, an expired hold, a reset, and a response
// lost on its way back (failure-matrix items 1 and 7).

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

func TestHappyPathOneOfEachAndSecondStartIsNoOp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Tuesday, 14)
	req.CustomerKey = testsupport.CustomerKey(t, req.Tenant, req.Customer)
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, r.GetID(), st.Reference)
	require.Equal(t, deposit.Captured, st.Payment)
	require.NotEmpty(t, st.MessageID)
	names := []string{}
	keys := map[string]bool{}
	for _, s := range st.Steps {
		names = append(names, s.Name)
		require.Regexp(t, `^bko1_[0-9a-f]{48}$`, s.Key)
		require.NotEmpty(t, s.DownstreamID, s.Name)
		keys[s.Key] = true
	}
	require.Equal(t, []string{"hold slot", "authorize deposit", "confirm hold", "capture deposit", "send confirmation"}, names)
	require.Len(t, keys, len(st.Steps), "every step has its own key")
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))

	again, existing, err := appointment.Start(context.Background(), e.tc, e.queue, req)
	require.NoError(t, err)
	require.True(t, existing)
	require.Equal(t, r.GetRunID(), again.GetRunID())
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))

	q := fmt.Sprintf(`WorkflowId = %q AND CustomerKey = %q AND CustomerMasked = %q AND BookingStatus = "Confirmed" AND Service = "tire-change"`,
		r.GetID(), req.CustomerKey, mask.Phones(req.Customer))
	testsupport.Eventually(t, 20*time.Second, "the Web UI filter to find the booking", func() bool {
		resp, err := e.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		return err == nil && len(resp.GetExecutions()) == 1
	})
}

func TestSlotTakenIsRejectedWithAlternatives(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	first := request(t, "+4915112345678", time.Wednesday, 10)
	first.ResourceID = "bay-1"
	second := first
	second.Customer = "+4915199999999"
	second.IntentID = first.IntentID + "-second"
	_, st1 := run(t, e, first)
	require.Equal(t, workflows.StatusConfirmed, st1.Status, st1.Reason)
	r2, st2 := run(t, e, second)
	require.Equal(t, workflows.StatusRejected, st2.Status)
	require.Equal(t, "slot_unavailable", st2.Reason)
	require.NotEmpty(t, st2.Alternatives)
	// Nothing held or charged; one message, offering the free slots.
	require.Equal(t, effects{Reservations: map[string]int{}, Intents: map[string]int{}, Messages: 1}, e.effects(t, second.Customer, second.SlotStart))
	var kind, body string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT kind, body FROM outbox_messages WHERE reference = $1`, r2.GetID()).Scan(&kind, &body))
	require.Equal(t, "alternatives", kind)
	for _, alt := range st2.Alternatives {
		require.Contains(t, body, alt.In(time.UTC).Format("02.01.2006 15:04"), "the loser is told every free slot")
	}
	require.Equal(t, booked, e.effects(t, first.Customer, first.SlotStart))
}

func TestDeclinedPaymentReleasesHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Thursday, 9)
	req.PaymentMethod = "pm_card_chargeDeclined"
	_, st := run(t, e, req)
	require.Equal(t, workflows.StatusPaymentFailed, st.Status)
	require.Equal(t, "card_declined", st.Reason)
	got := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"released": 1}, got.Reservations)
	require.Zero(t, got.Intents["requires_capture"]+got.Intents["succeeded"], "no live authorisation")
	require.Equal(t, 1, got.Messages, "the ending is told, once")
}

func TestCancelWhileDepositIsAuthorising(t *testing.T) {
	t.Parallel()
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
			var st appointment.State
			require.NoError(t, r.Get(ctx, &st))
			require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
			// The child finishes its void before the appointment closes.
			testsupport.Eventually(t, 30*time.Second, "the authorisation voided", func() bool {
				return e.effects(t, req.Customer, req.SlotStart).Intents["canceled"] == 1
			})
			got := e.effects(t, req.Customer, req.SlotStart)
			require.Equal(t, map[string]int{"released": 1}, got.Reservations)
			require.Equal(t, map[string]int{"canceled": 1}, got.Intents, "the authorisation that raced the cancel is voided")
			require.Zero(t, got.Messages)
		})
	}
}

func TestHoldExpiredTwiceIsRejectedAndCompensated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *config.Config) { c.HoldTTL = time.Millisecond })
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Monday, 15)
	_, st := run(t, e, req)
	require.Equal(t, workflows.StatusRejected, st.Status)
	require.Equal(t, "hold_expired", st.Reason)
	got := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"expired": 2}, got.Reservations, "one re-hold, then give up")
	require.Equal(t, map[string]int{"canceled": 1}, got.Intents)
	require.Equal(t, 1, got.Messages, "the ending is told, once")
}

// TestResetReusesHoldAndAuthorisation resets a finished booking to its
// first workflow task: the new run has a new run ID and so new keys, yet
// the business reference makes the calendar and the payment API answer
// with the hold and the authorisation the first run made.
func TestResetReusesHoldAndAuthorisation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345678", time.Tuesday, 10)
	r, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var st2 appointment.State
	require.NoError(t, e.reset(t, r, firstWorkflowTaskCompleted(t, e.tc, r)).Get(ctx, &st2))
	require.Equal(t, workflows.StatusConfirmed, st2.Status, st2.Reason)
	require.Equal(t, st.HoldID, st2.HoldID, "the reset run found its hold")
	require.Equal(t, st.IntentID, st2.IntentID, "the reset run found its authorisation")
	require.NotEqual(t, st.Steps[0].Key, st2.Steps[0].Key, "new run, new keys")
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))
}

// TestMatrix07WorkerKilledBeforeReporting proves failure-matrix item 7 (an
// activity finishes its external call and the worker is killed before
// reporting completion): the hold commits in the calendar, the worker is
// stopped before the answer arrives; a new worker retries with the same key
// and the calendar replays. One reservation, one captured deposit, one
// confirmation row.
func TestMatrix07WorkerKilledBeforeReporting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pause := e.calendar.PauseAt("POST", "/v1/holds", true)
	pause.Drop = true
	w1 := e.startWorker(t)
	req := request(t, "+4915112345678", time.Wednesday, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := e.startUntil(ctx, t, req, pause, "the hold")
	require.Equal(t, map[string]int{"held": 1}, e.effects(t, req.Customer, req.SlotStart).Reservations, "committed before the worker died")
	w1.Stop()
	pause.Release()
	e.startWorker(t)
	var st appointment.State
	require.NoError(t, r.Get(ctx, &st))
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Greater(t, st.Steps[0].Attempt, int32(1), "the hold succeeded on a retry")
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))
	var replays int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT replays FROM idempotency_keys WHERE idempotency_key = $1`, st.Steps[0].Key).Scan(&replays))
	require.Positive(t, replays, "the retry was answered from the stored response")
}

// TestMatrix01LostResponse proves failure-matrix item 1 (the downstream
// commits but the response never reaches the worker): a chaos proxy in
// front of the real calendar API forwards the first hold, lets the calendar
// commit it, and drops the answer. The activity sees an unknown outcome,
// retries with the same key, and the calendar replays the stored answer.
// Downstream: one reservation, one captured deposit, one confirmation row.
func TestMatrix01LostResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var holds []chaos.Exchange
	p, err := chaos.New(e.calendar.URL, []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 1, Limit: 1},
	}, chaos.WithObserver(func(x chaos.Exchange) {
		if x.Method == "POST" && x.Path == "/v1/holds" {
			mu.Lock()
			holds = append(holds, x)
			mu.Unlock()
		}
	}))
	require.NoError(t, err)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	e.cfg.CalendarURL = front.URL
	e.startWorker(t)

	req := request(t, "+4915112345678", time.Thursday, 11)
	_, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, booked, e.effects(t, req.Customer, req.SlotStart))
	require.Equal(t, 1, p.Stats()[chaos.DropAfterCommit])

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, holds, 2, "the lost hold and one retry")
	require.Equal(t, chaos.DropAfterCommit, holds[0].Fault)
	require.True(t, holds[0].Committed(), "the calendar committed before the answer was lost")
	require.Equal(t, holds[0].IdempotencyKey, holds[1].IdempotencyKey, "the retry reuses the activity's key")
	require.Equal(t, st.Steps[0].Key, holds[1].IdempotencyKey)
	require.True(t, holds[1].Replayed, "the calendar answered the retry from the stored response")
	require.Greater(t, st.Steps[0].Attempt, int32(1))
}

// A retry cap below the first backoff (200 ms) is a policy the server
// refuses: without the clamp every activity schedule failed and the
// booking never left its first workflow task.
func TestRetryCapBelowTheFirstBackoffStillBooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	req := request(t, "+4915112345690", time.Tuesday, 15)
	req.CustomerKey = testsupport.CustomerKey(t, req.Tenant, req.Customer)
	req.Tuning.MaxRetryInterval, req.Tuning.CompensationMaxInterval = 50*time.Millisecond, 10*time.Millisecond
	_, st := run(t, e, req)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	got := e.effects(t, req.Customer, req.SlotStart)
	require.Equal(t, map[string]int{"confirmed": 1}, got.Reservations)
	require.Equal(t, req.DepositAmount, got.Captured)
}

// TestStartFindsTheBookingUnderTheLegacyID: an appointment started before
// keyed intent IDs runs under the plain hash's ID. The same wish started
// now (StartAppointment derives the keyed ID) attaches to that booking:
// one reservation, one deposit, nothing started under the keyed ID.
func TestStartFindsTheBookingUnderTheLegacyID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker(t)
	ctx := context.Background()
	before := request(t, conversationCustomer(), time.Wednesday, 16)
	before.IntentID = workflows.LegacyIntentID(before.Tenant, before.Customer, before.Service, "", before.SlotStart)
	old, st := run(t, e, before)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)

	now := before
	now.IntentID, now.CustomerKey = "", testsupport.CustomerKey(t, before.Tenant, before.Customer)
	again, existing, err := appointment.Start(ctx, e.tc, e.queue, now)
	require.NoError(t, err)
	require.True(t, existing)
	require.Equal(t, old.GetID(), again.GetID())
	// Per customer and slot, whatever the reference: one booking, so none
	// was made under the keyed ID beside it.
	require.Equal(t, booked, e.effects(t, before.Customer, before.SlotStart))
	keyed := testsupport.AppointmentID(t, now.Tenant, now.Customer, now.Service, now.SlotStart)
	require.NotEqual(t, old.GetID(), keyed)
	_, err = e.tc.DescribeWorkflowExecution(ctx, keyed, "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "nothing runs under the keyed ID")
}

// TestStartNeedsTheCustomerKey: a start that derives the intent ID (no
// IntentID given) without a customer key is refused; it never books under
// a plain hash of the number.
func TestStartNeedsTheCustomerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req := request(t, conversationCustomer(), time.Wednesday, 17)
	req.IntentID = ""
	_, _, err := appointment.Start(context.Background(), e.tc, e.queue, req)
	require.ErrorIs(t, err, intent.ErrNoCustomerKey)
}
