package agent_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// TestUnknownCalendarOutcomeAnswersPending: the calendar commits the hold
// and the answer is lost, then stays unreachable. The tool does not fail
// (an error would invite the model to book again): after its bounded wait
// it answers pending with the handle, and get_booking shows the booking
// once the calendar is back — one reservation.
func TestUnknownCalendarOutcomeAnswersPending(t *testing.T) {
	t.Parallel()
	var outage *testsupport.Outage
	e := newEnv(t, func(calendarURL string) string {
		outage = testsupport.NewOutage(t, calendarURL)
		return outage.URL
	})
	e.svc.Wait = 2 * time.Second
	outage.DownAt(func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/holds" }, true)
	s := e.connect(t, devToken)
	customer := newCustomer()
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{
		"customer": customer, "service": "inspection", "start": testsupport.Slot(t, time.Wednesday, 9).Format(time.RFC3339),
	}, &a))
	require.Equal(t, agent.StatusPending, a.Status, a.Message)
	require.NotEmpty(t, a.WorkflowID)
	require.Contains(t, a.Message, "get_booking")
	<-outage.WentDown()

	var during agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": a.WorkflowID}, &during))
	require.Equal(t, agent.StatusPending, during.Status)

	outage.Up()
	var after agent.BookingAnswer
	testsupport.Eventually(t, 60*time.Second, "get_booking shows the booking", func() bool {
		require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": a.WorkflowID}, &after))
		return after.Status == agent.StatusConfirmed
	})
	require.NotEmpty(t, after.BookingID)
	e.requireReservations(t, customer, 1)
}

// TestPaymentLinkInTheAnswer: with deposits taken by payment link, the
// booking answers pending with the link, for the agent to read out or
// send; the link is the payment API's hosted page.
func TestPaymentLinkInTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc.PaymentMethod = "" // DEPOSIT_MODE=link
	s := e.connect(t, devToken)
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{
		"customer": newCustomer(), "service": "tire-change", "start": testsupport.Slot(t, time.Thursday, 15).Format(time.RFC3339),
	}, &a))
	require.Equal(t, agent.StatusPending, a.Status, a.Message)
	require.True(t, strings.HasPrefix(a.PaymentURL, e.cfg.PaymentsURL+"/pay/"), a.PaymentURL)
	require.Contains(t, a.Message, "payment_url")
	resp, err := http.Get(a.PaymentURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the hosted payment page")

	var again agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": a.WorkflowID}, &again))
	require.Equal(t, a.PaymentURL, again.PaymentURL, "get_booking repeats the link")
}

// TestADecisionWhoseSagaNeverStartedIsStarted: a process decided "new"
// for an intent and died before starting its saga (the intent row is all
// that is left). The next ask for that booking merges into it, sees no
// saga, starts it, and answers pending; the booking then completes once.
func TestADecisionWhoseSagaNeverStartedIsStarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc.Wait = time.Second
	customer, start := newCustomer(), testsupport.Slot(t, time.Friday, 14)
	key := testsupport.CustomerKey(t, "demo", customer)
	intentID, err := workflows.IntentID("demo", key, "tire-change", "", start)
	require.NoError(t, err)
	workflowID := appointment.WorkflowID("demo", intentID)
	_, err = e.pool.Exec(context.Background(), `INSERT INTO booking_intents (tenant_id, intent_id, customer, service, slot_start, channel, workflow_id, events)
		VALUES ('demo', $1, $2, 'tire-change', $3, 'whatsapp', $4, ARRAY['SMcrashed'])`, intentID, customer, start.UTC(), workflowID)
	require.NoError(t, err)

	s := e.connect(t, devToken)
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{"customer": customer, "service": "tire-change", "start": start.Format(time.RFC3339)}, &a))
	require.Equal(t, agent.StatusPending, a.Status, a.Message)
	require.Equal(t, workflowID, a.WorkflowID)
	var after agent.BookingAnswer
	testsupport.Eventually(t, 60*time.Second, "the started saga books", func() bool {
		require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": workflowID}, &after))
		return after.Status == agent.StatusConfirmed
	})
	e.requireReservations(t, customer, 1)
}
