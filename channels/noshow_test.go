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
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// postAction posts body to the appointment's action ("cancel", "no-show") and
// returns the status, the body and the header.
func (e cancelEnv) postAction(t *testing.T, id, action, key, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.admin+"/v1/appointments/"+id+"/"+action, strings.NewReader(body))
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

// slotBegun restarts the lifecycle of the booked appointment id with its
// slot begun ten minutes ago. The in-process server cannot skip time and
// the calendar books only future slots within opening hours, so the
// booking, its calendar entry and its captured deposit are real, and only
// the lifecycle's input (the input its appointment gave it, read from its
// history) says the slot is now: the running lifecycle is terminated and
// started again under the same ID with that input.
func (e cancelEnv) slotBegun(t *testing.T, id string) lifecycle.Input {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wid := lifecycle.WorkflowID(id)
	first, err := e.tc.GetWorkflowHistory(ctx, wid, "", false, 0).Next()
	require.NoError(t, err)
	var in lifecycle.Input
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(
		first.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in))
	require.Positive(t, in.Deposit, "the appointment handed over a captured deposit")
	require.NoError(t, e.tc.TerminateWorkflow(ctx, wid, "", "test: the slot is moved to now"))
	in.SlotStart = time.Now().Add(-10 * time.Minute).UTC()
	in.SlotEnd = in.SlotStart.Add(time.Hour)
	_, err = e.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: wid, TaskQueue: e.queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.CustomerPhoneKey.ValueSet(in.Customer), workflows.ServiceKey.ValueSet(in.Service)),
	}, lifecycle.WorkflowName, in)
	require.NoError(t, err)
	return in
}

// TestNoShowThroughTheAPIKeepsTheDeposit: a no-show before the slot is
// refused with the reason; once the slot has begun, the API marks it
// (twice with one key, once with another: the same answer), the deposit
// stays captured (no refund), the calendar booking stands, no message is
// sent, a cancel is refused, and the Web UI finds it as NoShow.
func TestNoShowThroughTheAPIKeepsTheDeposit(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	id := e.book(t, newCustomer())

	code, body, _ := e.postAction(t, id, "no-show", "early", "")
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body, `"code":"not_no_show"`)
	require.Contains(t, body, "has not begun")

	e.slotBegun(t, id)
	var answers []lifecycle.State
	for _, key := range []string{"ns-1", "ns-1", "ns-2"} {
		code, body, _ := e.postAction(t, id, "no-show", key, `{"note": "did not come"}`)
		require.Equal(t, http.StatusOK, code, body)
		var st lifecycle.State
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		answers = append(answers, st)
	}
	require.Equal(t, workflows.StatusNoShow, answers[0].Status, answers[0].Reason)
	require.Equal(t, lifecycle.DepositKept, answers[0].Deposit)
	require.Equal(t, answers[0], answers[1], "the same key: the first answer")
	require.Equal(t, answers[0], answers[2], "another key: the same state")

	code, body, _ = e.postAction(t, id, "cancel", "late-cancel", "")
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body, `"code":"not_cancellable"`)

	ctx := context.Background()
	var status string
	var captured int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT status, amount_captured FROM payment_intents WHERE booking_reference = $1`, id).Scan(&status, &captured))
	require.Equal(t, "succeeded", status)
	require.Equal(t, int64(2000), captured, "the deposit stays captured")
	require.Zero(t, countOf(t, e, `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id), "no refund")
	require.Equal(t, 1, countOf(t, e, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'confirmed'`, id), "the calendar booking stands")
	require.Equal(t, 1, countOf(t, e, `SELECT count(*) FROM outbox_messages WHERE reference = $1`, id), "the confirmation only: no message about a no-show")

	testsupport.Eventually(t, 30*time.Second, "the Web UI finds the booking as NoShow", func() bool {
		res, err := e.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: `BookingStatus = 'NoShow' AND WorkflowId = '` + lifecycle.WorkflowID(id) + `'`,
		})
		return err == nil && len(res.GetExecutions()) == 1
	})
}

// TestNoShowAPIRefusesBadInput: what the API answers before any workflow
// is asked, and for an appointment it does not know.
func TestNoShowAPIRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	cases := []struct {
		name, id, key, body string
		code                int
		problem             string
	}{
		{"no Idempotency-Key", "appointment:demo:x", "", "", http.StatusBadRequest, "idempotency_key_required"},
		{"malformed body", "appointment:demo:x", "k", `{"note": 1}`, http.StatusBadRequest, "invalid_request"},
		{"unknown field", "appointment:demo:x", "k", `{"reason": "x"}`, http.StatusBadRequest, "invalid_request"},
		{"another tenant's appointment", "appointment:other:x", "k", "", http.StatusNotFound, "not_found"},
		{"no such appointment", "appointment:demo:nonexistent", "k", "", http.StatusNotFound, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, header := e.postAction(t, tc.id, "no-show", tc.key, tc.body)
			require.Equal(t, tc.code, code, body)
			require.Equal(t, "application/problem+json", header.Get("Content-Type"))
			require.Contains(t, body, `"code":"`+tc.problem+`"`)
		})
	}
}

func countOf(t *testing.T, e cancelEnv, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
