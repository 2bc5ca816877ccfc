package workflows_test

// The customer cancels while the calendar confirms or the deposit is
// captured (failure-matrix item 15).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// TestMatrix15CancelDuringConfirmIsHonoured: the customer cancels while
// the calendar confirms the hold, or while the deposit is captured (the
// downstream request is held at a proxy until the signal was sent). The
// booking is undone: no active reservation, the deposit voided or
// refunded, no confirmation. Each case runs against our authoritative
// API and behind a search that lags every query (Stripe's): the
// compensation voids or refunds by the intent ID it knows, never by a
// search that does not show the deposit yet.
func TestMatrix15CancelDuringConfirmIsHonoured(t *testing.T) {
	t.Parallel()
	for _, lagging := range []bool{false, true} {
		t.Run(fmt.Sprintf("lagging search %v", lagging), func(t *testing.T) { cancelDuringConfirm(t, lagging) })
	}
}

func cancelDuringConfirm(t *testing.T, lagging bool) {
	cases := []struct {
		name    string
		pause   func(e env) *testsupport.Pause
		intents map[string]int
		refunds int
	}{
		{"during confirm", func(e env) *testsupport.Pause { return e.calendar.PauseAt("POST", "/v1/holds/", false) },
			map[string]int{"canceled": 1}, 0},
		{"during capture", func(e env) *testsupport.Pause { return e.payments.PauseAt("POST", "/v1/payment_intents/", false) },
			map[string]int{"succeeded": 1}, 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *config.Config) { c.PaymentsAuthoritativeLookup = !lagging })
			if lagging {
				e.cfg.PaymentsURL = testsupport.NewLaggingSearch(t, e.payments.URL, 1<<20, 0).URL
			}
			e.startWorker(t)
			pause := tc.pause(e)
			req := request(t, fmt.Sprintf("+491511234561%d", i), time.Tuesday, 15)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r := e.startUntil(ctx, t, req, pause, tc.name)
			require.NoError(t, e.tc.SignalWorkflow(ctx, r.GetID(), "", workflows.SignalCancel, nil))
			pause.Release()
			st := result(t, r)
			require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
			testsupport.Eventually(t, 30*time.Second, "the deposit voided or refunded", func() bool {
				got := e.effects(t, req.Customer, req.SlotStart)
				return got.Intents["requires_capture"] == 0 && got.Refunds == tc.refunds
			})
			got := e.effects(t, req.Customer, req.SlotStart)
			require.Zero(t, got.Reservations["held"]+got.Reservations["confirmed"], "no active reservation: %v", got.Reservations)
			require.Equal(t, tc.intents, got.Intents)
			require.Equal(t, tc.refunds, got.Refunds)
			require.Zero(t, got.Messages, "no confirmation")
		})
	}
}
