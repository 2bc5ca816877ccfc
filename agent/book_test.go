package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// channelOf reads a booking's Channel search attribute, as the Web UI
// shows it.
func (e env) channelOf(t *testing.T, workflowID string) string {
	t.Helper()
	return e.keywordOf(t, workflowID, workflows.ChannelKey.GetName())
}

// keywordOf is a keyword search attribute of the workflow; it must be set.
func (e env) keywordOf(t *testing.T, workflowID, name string) string {
	t.Helper()
	resp, err := e.tc.DescribeWorkflowExecution(context.Background(), workflowID, "")
	require.NoError(t, err)
	p, ok := resp.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[name]
	require.True(t, ok, "%s set", name)
	var v string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &v))
	return v
}

func (e env) requireReservations(t *testing.T, customer string, confirmed int) {
	t.Helper()
	require.Equal(t, confirmed, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1 AND status = 'confirmed'`, customer), "confirmed")
	require.Equal(t, confirmed, e.count(t, `SELECT count(*) FROM calendar_reservations WHERE customer = $1`, customer), "reservations")
}

// TestBookThroughMCP: begin an operation, book with it: confirmed, one
// reservation in the calendar, and the booking shows Channel = "agent".
func TestBookThroughMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	var op agent.OperationOutput
	require.Empty(t, call(t, s, agent.ToolBeginOperation, nil, &op))
	require.Equal(t, agent.CapabilitiesVersion(), op.CapabilitiesVersion)
	customer := newCustomer()
	start := testsupport.Slot(t, time.Wednesday, 10)
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{
		"customer": customer, "service": "tire-change", "start": start.Format(time.RFC3339), "operation_id": op.OperationID,
	}, &a))
	require.Equal(t, agent.StatusConfirmed, a.Status, a.Message)
	require.NotEmpty(t, a.BookingID)
	require.Equal(t, start.Format(time.RFC3339), a.Start)
	e.requireReservations(t, customer, 1)
	require.Equal(t, string(workflows.ChannelAgent), e.channelOf(t, a.WorkflowID))
	require.Equal(t, string(testsupport.CustomerKey(t, "demo", customer)), e.keywordOf(t, a.WorkflowID, workflows.CustomerKeyKey.GetName()),
		"the agent's booking is found by the customer's key, not the number")

	var got agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolGetBooking, map[string]any{"id": a.BookingID}, &got))
	require.Equal(t, agent.StatusConfirmed, got.Status)
	require.Equal(t, a.WorkflowID, got.WorkflowID)
	var list agent.ListBookingsOutput
	require.Empty(t, call(t, s, agent.ToolListBookings, map[string]any{"customer": customer}, &list))
	require.Len(t, list.Bookings, 1)
	require.Equal(t, a.BookingID, list.Bookings[0].BookingID)
}

// TestSameBookingFiveTimesAtOnce: an agent fires the same tool call five
// times in parallel: one booking, five identical answers, and the four
// repeats counted as duplicates blocked at the agent layer.
func TestSameBookingFiveTimesAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	var op agent.OperationOutput
	require.Empty(t, call(t, s, agent.ToolBeginOperation, nil, &op))
	customer := newCustomer()
	args := map[string]any{"customer": customer, "service": "oil-change",
		"start": testsupport.Slot(t, time.Thursday, 11).Format(time.RFC3339), "operation_id": op.OperationID}
	answers := make([]agent.BookingAnswer, 5)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if msg := call(t, s, agent.ToolBookAppointment, args, &answers[i]); msg != "" {
				t.Errorf("call %d: tool error %s", i, msg)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, agent.StatusConfirmed, answers[0].Status, answers[0].Message)
	for i := 1; i < len(answers); i++ {
		require.Equal(t, answers[0], answers[i], "answer %d", i)
	}
	e.requireReservations(t, customer, 1)
	require.Equal(t, 1, e.count(t, `SELECT count(*) FROM payment_intents WHERE metadata->>'booking_reference' = $1`, answers[0].WorkflowID), "one deposit")
	require.Equal(t, 4.0, testutil.ToFloat64(e.svc.Metrics.Duplicates().WithLabelValues(agent.LayerAgent, "demo", string(agent.ToolBookAppointment))))
}

// TestRephrasedSlotIsTheSameBooking: "Dienstag 14 Uhr" and the same slot
// in RFC 3339 are one intent: one booking, the same answer; under another
// operation the same wish answers already_booked.
func TestRephrasedSlotIsTheSameBooking(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	day := testsupport.SpokenWeekday(t, time.Tuesday, 14)
	spoken := "Dienstag 14 Uhr"
	if time.Now().In(day.Location()).Weekday() == time.Tuesday {
		spoken = day.Format("2.1.") + " um 14 Uhr" // "Dienstag" today would mean today
	}
	first := book(t, s, map[string]any{"customer": customer, "service": "tire-change", "start": spoken}, agent.StatusConfirmed)
	second := book(t, s, map[string]any{"customer": customer, "service": "tire-change", "start": day.Format(time.RFC3339)}, agent.StatusConfirmed)
	require.Equal(t, first, second, "the same answer")

	var op agent.OperationOutput
	require.Empty(t, call(t, s, agent.ToolBeginOperation, nil, &op))
	other := book(t, s, map[string]any{
		"customer": customer, "service": "tire-change", "start": day.UTC().Format(time.RFC3339), "operation_id": op.OperationID,
	}, agent.StatusAlreadyBooked)
	require.Equal(t, first.BookingID, other.BookingID)
	require.Equal(t, first.WorkflowID, other.WorkflowID)
	e.requireReservations(t, customer, 1)
}

// TestDifferentSlotInWindowNeedsConfirmation: the same customer asks for
// the same service at another time that day, right after booking: the
// tool names the existing booking and books nothing, opens no review
// case; confirmed by the customer (confirm_second), it books the second.
func TestDifferentSlotInWindowNeedsConfirmation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	first := testsupport.Slot(t, time.Friday, 10)
	a := book(t, s, map[string]any{"customer": customer, "service": "tire-change", "start": first.Format(time.RFC3339)}, agent.StatusConfirmed)

	later := map[string]any{"customer": customer, "service": "tire-change", "start": first.Add(3 * time.Hour).Format(time.RFC3339)}
	b := book(t, s, later, agent.StatusNeedsConfirmation)
	require.Equal(t, a.BookingID, b.ExistingBooking)
	require.Equal(t, first.Format(time.RFC3339), b.ExistingStart)
	require.Contains(t, b.Message, "confirm_second")
	e.requireReservations(t, customer, 1)
	require.Zero(t, e.count(t, `SELECT count(*) FROM review_cases`), "the agent asks its human; no review case")

	later["confirm_second"] = true
	c := book(t, s, later, agent.StatusConfirmed)
	require.NotEqual(t, a.WorkflowID, c.WorkflowID)
	e.requireReservations(t, customer, 2)
}

// TestOperationIDsTheServerDidNotIssueAreRefused: forged, foreign, stale
// and reused operation IDs are tool errors that say what to do, and
// nothing is booked under them.
func TestOperationIDsTheServerDidNotIssueAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.connect(t, devToken)
	customer := newCustomer()
	start := testsupport.Slot(t, time.Monday, 9)
	var used agent.OperationOutput
	require.Empty(t, call(t, s, agent.ToolBeginOperation, nil, &used))
	var a agent.BookingAnswer
	require.Empty(t, call(t, s, agent.ToolBookAppointment, map[string]any{
		"customer": customer, "service": "tire-change", "start": start.Format(time.RFC3339), "operation_id": used.OperationID,
	}, &a))
	require.Equal(t, agent.StatusConfirmed, a.Status, a.Message)

	issue := func(tenant, version string) string {
		id, err := e.svc.Signer.Issue(tenant, "", version, time.Now())
		require.NoError(t, err)
		return id
	}
	fresh := issue("demo", agent.CapabilitiesVersion())
	cases := []struct {
		name, id string
		want     error
	}{
		{"invented by the model", "op_book-tire-change-for-customer", agent.ErrOperationForged},
		{"altered", fresh[:len(fresh)-2] + "xx", agent.ErrOperationForged},
		{"signed with another key", forge(t, fresh), agent.ErrOperationForged},
		{"another tenant's", issue("nord", agent.CapabilitiesVersion()), agent.ErrOperationForeign},
		{"an older tool contract", issue("demo", "0ld-c0ntract"), agent.ErrOperationStale},
		{"used for another booking", used.OperationID, agent.ErrOperationReused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := call(t, s, agent.ToolBookAppointment, map[string]any{
				"customer": customer, "service": "tire-change", "start": start.Add(2 * time.Hour).Format(time.RFC3339), "operation_id": c.id,
			}, nil)
			require.Equal(t, c.want.Error(), msg)
		})
	}
	e.requireReservations(t, customer, 1)
}

// forge re-signs an operation ID's payload with a key of the attacker's.
func forge(t *testing.T, id string) string {
	t.Helper()
	other := agent.Signer{Key: []byte("not the server's key")}
	forged, err := other.Issue("demo", "", agent.CapabilitiesVersion(), time.Now())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(forged, "op_"))
	require.NotEqual(t, id, forged)
	return forged
}
