package workflows_test

// The customer cancels after the deposit was captured, while the
// appointment starts the booking's lifecycle (failure-matrix item 29).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestMatrix29CancelWhileTheLifecycleStartsIsCarriedOut: the cancel
// signal lands exactly while the committed appointment starts its
// BookingWorkflow (the appointment is held at that start by a gate until
// the signal is in its history). The conversation told the customer "we
// cancel", so the wish is carried out by the lifecycle: the calendar
// booking cancelled, the deposit refunded, the cancellation message
// reserved, and the confirmation, still waiting in the outbox, taken back:
// the customer reads no "bestätigt" after "Wir stornieren" (#48 item 4;
// before, both went out, the confirmation after the acknowledgement). When the cancel would keep the deposit (inside the tenant's
// window) the customer was not warned: nothing is cancelled and a person
// gets a cancellation_request case. Before, the signal was never read:
// booking and deposit stood and nobody knew.
func TestMatrix29CancelWhileTheLifecycleStartsIsCarriedOut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		window time.Duration
		want   effects
		cases  map[string]int
	}{
		{"free cancel", 0, effects{Reservations: map[string]int{"cancelled": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Refunds: 1, Messages: 1}, map[string]int{}},
		// The customer was told the unconfirmed booking is being
		// cancelled: inside the window too, the deposit comes back.
		{"inside the cancellation window", 30 * 24 * time.Hour, effects{Reservations: map[string]int{"cancelled": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Refunds: 1, Messages: 1}, map[string]int{}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			gate := testsupport.NewChildGate("BookingWorkflow")
			e.startWorker(t, gate)
			req := request(t, fmt.Sprintf("+491511234571%d", i), time.Tuesday, 16)
			req.Terms = &tenants.Terms{Language: "de", CancellationWindow: tc.window}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, _, err := appointment.Start(ctx, e.tc, e.queue, req)
			require.NoError(t, err)
			gate.SignalAtGate(ctx, t, e.tc, r.GetID(), workflows.SignalCancel)
			st := result(t, r)
			require.Equal(t, workflows.StatusConfirmed, st.Status, "the appointment committed: %s", st.Reason)
			// The refund and the message follow the calendar's cancel: wait
			// for the last effect, not the first.
			testsupport.Eventually(t, 30*time.Second, "the late cancel carried out or handed to a person", func() bool {
				got := e.effects(t, req.Customer, req.SlotStart)
				return got.Reservations["cancelled"] > 0 && got.Refunds > 0 && got.Messages > 0 || len(e.reviewCases(t, r.GetID())) > 0
			})
			require.Equal(t, tc.want, e.effects(t, req.Customer, req.SlotStart))
			require.Equal(t, tc.cases, e.reviewCases(t, r.GetID()))
			require.Equal(t, map[string]string{"cancellation": "pending", "confirmation": "withdrawn"}, e.messageStates(t, r.GetID()),
				"only the cancellation can reach the customer")
		})
	}
}
