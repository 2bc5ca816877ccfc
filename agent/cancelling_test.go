package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestBookDuringItsCancelIsNotConfirmed: while a confirmed booking is
// being cancelled (the calendar's cancel held at a proxy), the agent asks
// for the same wish again. The answer must not be "Booked." naming the
// booking that is ending (seen in the 1000-booking drill): it says the
// booking is being cancelled. Once the cancel is done, the same call books
// anew.
func TestBookDuringItsCancelIsNotConfirmed(t *testing.T) {
	t.Parallel()
	var proxy *testsupport.Proxy
	e := newEnv(t, func(upstream string) string {
		proxy = testsupport.NewProxy(t, upstream)
		return proxy.URL
	})
	s := e.connect(t, devToken)
	customer := newCustomer()
	slot := testsupport.Slot(t, time.Thursday, 15)
	wish := map[string]any{"customer": customer, "service": "tire-change", "start": slot.Format(time.RFC3339)}
	first := book(t, s, wish, agent.StatusConfirmed)

	pause := proxy.PauseAt("POST", "/v1/bookings/", false)
	cancelled := make(chan error, 1)
	go func() {
		_, err := lifecycle.Cancel(context.Background(), e.tc, first.WorkflowID, lifecycle.CancelUpdateID("demo", "api-1"), lifecycle.CancelRequest{Reason: "verhindert"})
		cancelled <- err
	}()
	testsupport.AwaitPause(t, pause, cancelled)
	var during agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, wish, &during))
	require.NotEqual(t, agent.StatusConfirmed, during.Status, during.Message)
	require.Equal(t, agent.StatusPending, during.Status, during.Message)
	require.Contains(t, during.Message, "being cancelled")

	pause.Release()
	require.NoError(t, <-cancelled)
	again := book(t, s, wish, agent.StatusConfirmed)
	require.NotEqual(t, first.WorkflowID, again.WorkflowID, "a new booking once the first is cancelled")
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed' AND lower(slot) = $2`, customer, slot.UTC()))
}
