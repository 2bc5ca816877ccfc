package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/conversation"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestCancelWishWhileTheCancelIsUnderWayIsNotToldCancelled: a booking
// cancelled through the API waits for its refund (the payment API's
// answer held at a proxy); the customer writes "Ich muss absagen"
// meanwhile. The answer says the wish is being carried out, not "ist
// bereits storniert": nothing is cancelled yet, and a customer who took
// that for done and booked the slot again was merged into the ending
// booking. Once the refund lands, one cancellation message follows.
func TestCancelWishWhileTheCancelIsUnderWayIsNotToldCancelled(t *testing.T) {
	s := newConvStack(t)
	h := cancelWithRefundHeld(t, &s)
	fake, customer, in := h.fake, h.customer, h.in
	s.say(t, in, "SMcancel", "Ich muss absagen")
	testsupport.Eventually(t, 60*time.Second, "the answer to the cancel wish", func() bool { return messagesTo(fake, customer, "") == 3 })
	require.Zero(t, messagesTo(fake, customer, "bereits storniert"), "nothing is cancelled yet")
	require.Equal(t, 1, messagesTo(fake, customer, "wird gerade ausgeführt"))

	h.refund.Release()
	require.NoError(t, <-h.cancelled)
	testsupport.Eventually(t, 60*time.Second, "the cancellation message", func() bool { return messagesTo(fake, customer, "ist storniert.") == 1 })
	s.idle(t, conversation.LegacyWorkflowID("demo", customer), "")
	require.Equal(t, 4, messagesTo(fake, customer, ""), "reply, confirmation, answer, cancellation: nothing twice")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM refunds`))
}

// The tests built on cancelWithRefundHeld do not run in parallel: beside
// other tests on the package's server, the lifecycle was seen still
// published Confirmed for more than 10 s while its cancel's refund waited
// at the proxy, so dedup and the conversation read the booking as live.
// The history showed why: the cancel arrived with the lifecycle's first
// workflow task, its handler published Cancelling as it was registered,
// and the setup's "booked" published Confirmed after it. The setup now
// publishes before it registers handlers (publish-booked-first,
// TestCancelTakenAsTheBookingStartsNeverReadsConfirmedAgain).

// refundHeld is a customer's confirmed booking whose cancel through the
// API waits for its refund, held at a proxy.
type refundHeld struct {
	fake                        *twilio.FakeServer
	customer, wish, appointment string
	in                          conversation.Input
	refund                      *testsupport.Pause
	cancelled                   chan error // the cancel's answer, once released
}

// cancelWithRefundHeld books by WhatsApp (confirmed, its lifecycle
// running), then cancels through the API until the refund reaches the
// proxy; it starts s's worker.
func cancelWithRefundHeld(t *testing.T, s *convStack) refundHeld {
	t.Helper()
	proxy := testsupport.NewProxy(t, s.cfg.PaymentsURL)
	s.cfg.PaymentsURL = proxy.URL
	h := refundHeld{refund: proxy.PauseAt("POST", "/v1/refunds", false), cancelled: make(chan error, 1)}
	h.refund.Outage = true      // a retry after the first attempt's timeout waits too
	t.Cleanup(h.refund.Release) // a failed test must not leave the proxy hanging
	s.worker(t)
	h.fake, h.customer = fakeTwilio(t, *s), conversationCustomer()
	h.in, h.wish = conversationInput(h.customer, 0), "Reifenwechsel "+slotText(t, 15)
	s.say(t, h.in, "SMbook", h.wish)
	testsupport.Eventually(t, 60*time.Second, "the confirmation at Twilio", func() bool { return messagesTo(h.fake, h.customer, "bestätigt:") == 1 })
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`SELECT reference FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, h.customer).Scan(&h.appointment))
	s.awaitLifecycle(t, h.appointment)
	go func() {
		_, err := lifecycle.Cancel(context.Background(), s.tc, h.appointment, lifecycle.CancelUpdateID("demo", "api-1"), lifecycle.CancelRequest{Reason: "customer called"})
		h.cancelled <- err
	}()
	testsupport.AwaitPause(t, h.refund, h.cancelled)
	// Seen once under make test's load (issue #48): the refund waited
	// while the lifecycle still read Confirmed for 10 s. Should it recur,
	// the history says which workflow task published what.
	t.Cleanup(func() {
		if t.Failed() {
			logHistory(t, s.tc, lifecycle.WorkflowID(h.appointment))
		}
	})
	first := true
	testsupport.Eventually(t, 10*time.Second, "the lifecycle published as cancelling", func() bool {
		st, _, err := workflows.PublishedStatus(context.Background(), s.tc, lifecycle.WorkflowID(h.appointment))
		if first && st != workflows.StatusCancelling {
			t.Logf("the refund waits, yet the lifecycle shows %q (%v)", st, err)
		}
		first = false
		return err == nil && st == workflows.StatusCancelling
	})
	return h
}

// logHistory logs a workflow's events, each with its type and, for
// search attribute upserts, what they published.
func logHistory(t *testing.T, c client.Client, workflowID string) {
	it := c.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Logf("history of %s: %v", workflowID, err)
			return
		}
		t.Logf("%s #%d %s %s %v", workflowID, ev.GetEventId(), ev.GetEventTime().AsTime().Format("15:04:05.000"), ev.GetEventType(),
			ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()["BookingStatus"].GetData())
	}
}
