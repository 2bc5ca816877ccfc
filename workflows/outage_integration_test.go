package workflows_test

// A payment API outage longer than the step retry budget while a void, a
// refund or the capture is due (failure-matrix item 12).

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestMatrix12CompensationOutlastsOutage: the payment API goes down just
// as a void (the holds expired, the booking is rejected) or a refund (the
// capture committed, its answer was lost) is due, and stays down for six
// times the step retry budget. The compensation keeps retrying with its
// key; once the API is back there is exactly one void or one refund.
func TestMatrix12CompensationOutlastsOutage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		tweak       func(*config.Config)
		downAt      func(*http.Request) bool
		afterCommit bool
		status      workflows.BookingStatus
		intents     map[string]int
		refunds     int
	}{
		{"void after the holds expired", func(c *config.Config) { c.HoldTTL = time.Millisecond },
			postSuffix("/cancel"), false, workflows.StatusRejected, map[string]int{"canceled": 1}, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.tweak)
			outage := testsupport.NewOutage(t, e.payments.URL)
			outage.DownAt(tc.downAt, tc.afterCommit)
			e.cfg.PaymentsURL = outage.URL
			e.startWorker(t)
			req := request(t, fmt.Sprintf("+491511234560%d", i), time.Monday, 11)
			req.Tuning = shortSteps
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
			require.NoError(t, err)
			<-outage.WentDown()
			// Longer than the budgets of every step and undo that may run
			// into it (capture, its reconciliation, both sagas' voids).
			budget := 6 * int(shortSteps.ActivityAttempts)
			endWhen(t, r, "the outage outlasting six step budgets", func() bool { return outage.Refused() >= budget })
			outage.Up()
			st := result(t, r)

			testsupport.Eventually(t, 30*time.Second, "the compensation to land", func() bool {
				got := e.effects(t, req.Customer, req.SlotStart)
				return got.Intents["requires_capture"] == 0 && got.Refunds == tc.refunds
			})
			got := e.effects(t, req.Customer, req.SlotStart)
			require.Equal(t, tc.intents, got.Intents, "one intent, voided or captured")
			require.Equal(t, tc.refunds, got.Refunds, "exactly one refund where money was captured")
			require.Zero(t, got.Reservations["held"]+got.Reservations["confirmed"], "no active reservation")
			require.Equal(t, 1, got.Messages, "only the ending is told")
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Empty(t, e.reviewCases(t, r.GetID()), "the compensations completed: nobody needs to act")
			require.GreaterOrEqual(t, outage.Refused(), budget, "the outage outlasted the step retry budget")
		})
	}
}

// TestCaptureOutlastsOutageAndTheBookingStands: the capture commits, its
// answer is lost and the payment API stays down longer than a step's retry
// budget. The capture is the booking's commit step, so it retries with its
// key until the API is back (the replay answers "captured") instead of
// turning a confirmed booking into a refunded, cancelled one.
func TestCaptureOutlastsOutageAndTheBookingStands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	outage := testsupport.NewOutage(t, e.payments.URL)
	outage.DownAt(postSuffix("/capture"), true)
	e.cfg.PaymentsURL = outage.URL
	e.startWorker(t)
	req := request(t, "+4915112345699", time.Tuesday, 11)
	req.Tuning = shortSteps
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
	require.NoError(t, err)
	<-outage.WentDown()
	budget := 3 * int(shortSteps.ActivityAttempts)
	endWhen(t, r, "the outage outlasting three step budgets", func() bool { return outage.Refused() >= budget })
	outage.Up()
	st := result(t, r)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, effects{Reservations: map[string]int{"confirmed": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 1},
		e.effects(t, req.Customer, req.SlotStart), "one booking, captured once, no refund, one confirmation")
	require.GreaterOrEqual(t, outage.Refused(), budget, "the outage outlasted the step retry budget")
}
