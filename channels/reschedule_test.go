package channels_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// reschedule posts a move and returns the status and the body.
func (e cancelEnv) reschedule(t *testing.T, id, key, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.admin+"/v1/appointments/"+id+"/reschedule", strings.NewReader(body))
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

// countRows runs a count query.
func countRows(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// bookedSlot is the slot cancelEnv.book books.
func bookedSlot(t *testing.T) time.Time {
	return testsupport.NextWeekdayAfter(t, time.Wednesday, 11, 48*time.Hour)
}

// startBody is a reschedule request body for start.
func startBody(start time.Time) string {
	return fmt.Sprintf(`{"start": %q}`, start.Format(time.RFC3339))
}

// TestRescheduleThroughTheAPIMovesOnce: a card booking moved through the
// API three times with the same Idempotency-Key (a redelivered request):
// one move in the calendar (the old booking cancelled, one new one
// confirmed under the move's reference), no second charge, one message
// with the new time at Twilio. A cancel then refunds the deposit once.
func TestRescheduleThroughTheAPIMovesOnce(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	customer := newCustomer()
	id := e.book(t, customer)
	to := bookedSlot(t).AddDate(0, 0, 1)

	var answers []lifecycle.State
	for range 3 {
		code, body, _ := e.reschedule(t, id, "move-1", startBody(to))
		require.Equal(t, http.StatusOK, code, body)
		var st lifecycle.State
		require.NoError(t, json.Unmarshal([]byte(body), &st))
		answers = append(answers, st)
	}
	require.Equal(t, workflows.StatusConfirmed, answers[0].Status, answers[0].Reason)
	require.True(t, to.Equal(answers[0].SlotStart))
	require.Len(t, answers[0].Moves, 1)
	require.Equal(t, answers[0], answers[1], "the same key: the first answer")
	require.Equal(t, answers[0], answers[2], "the same key: the first answer")

	ctx := context.Background()
	moved := lifecycle.MoveReference(id, 1)
	type row struct{ ref, status, booking string }
	rows := func() []row {
		r, err := e.pool.Query(ctx, `SELECT reference, status, coalesce(booking_id, '') FROM calendar_reservations
			WHERE reference LIKE $1 || '%' ORDER BY created_at`, id)
		require.NoError(t, err)
		defer r.Close()
		var out []row
		for r.Next() {
			var x row
			require.NoError(t, r.Scan(&x.ref, &x.status, &x.booking))
			out = append(out, x)
		}
		require.NoError(t, r.Err())
		return out
	}
	got := rows()
	require.Len(t, got, 2, "the old reservation and one new: %v", got)
	require.Equal(t, row{id, "cancelled", got[0].booking}, got[0])
	require.Equal(t, row{moved, "confirmed", answers[0].BookingID}, got[1])
	require.Equal(t, 1, countRows(t, e.pool, `SELECT count(*) FROM payment_intents WHERE charge_id IS NOT NULL`), "one charge")
	require.Zero(t, countRows(t, e.pool, `SELECT count(*) FROM refunds`), "nothing refunded by the move")
	testsupport.Eventually(t, 60*time.Second, "the move's message delivered", func() bool {
		var n int
		err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND kind = 'rescheduled_1'
			AND provider_id IS NOT NULL`, id).Scan(&n)
		return err == nil && n == 1
	})
	require.Equal(t, 1, countRows(t, e.pool, `SELECT count(*) FROM outbox_messages WHERE kind LIKE 'rescheduled_%'`), "one move message")
	moves := 0
	for _, m := range e.twilio.Messages() {
		if strings.Contains(m.To, customer) && strings.Contains(m.Body, "verschoben") {
			moves++
			require.Contains(t, m.Body, answers[0].BookingID)
		}
	}
	require.Equal(t, 1, moves, "one move message at Twilio")

	code, body, _ := e.cancel(t, id, "cancel-1", "")
	require.Equal(t, http.StatusOK, code, body)
	var st lifecycle.State
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
	require.Equal(t, lifecycle.DepositRefunded, st.Deposit)
	require.Equal(t, "cancelled", rows()[1].status, "the cancel reached the new booking")
	var refunds int
	var refunded int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(r.amount), 0) FROM refunds r
		JOIN payment_intents p ON p.id = r.payment_intent_id WHERE p.booking_reference = $1`, id).Scan(&refunds, &refunded))
	require.Equal(t, 1, refunds, "one refund")
	require.Equal(t, int64(2000), refunded, "the deposit in full")
}

// TestRescheduleAPIAnswers: a taken slot answers 409 with alternatives
// and leaves the booking alone; bad input and a cancelled booking are
// refused with problem+json.
func TestRescheduleAPIAnswers(t *testing.T) {
	t.Parallel()
	e := newCancelEnv(t)
	id := e.book(t, newCustomer())
	taken := bookedSlot(t).Add(3 * time.Hour)
	cal := calendar.NewClient(e.calendar, config.DefaultAPIToken)
	for i, res := range []string{"bay-1", "bay-2", "tech-anna"} {
		_, err := cal.CreateHold(context.Background(), fmt.Sprintf("block-%d", i), calendar.HoldRequest{
			ResourceID: res, Service: "tire-change", Start: taken, Customer: newCustomer(), Reference: "front-desk-" + res,
		})
		require.NoError(t, err)
	}
	cases := []struct {
		name, id, key, body string
		cancelFirst         bool
		code                int
		problem             string
	}{
		{name: "no Idempotency-Key", id: id, body: startBody(taken), code: http.StatusBadRequest, problem: "idempotency_key_required"},
		{name: "no start", id: id, key: "k1", body: `{}`, code: http.StatusBadRequest, problem: "invalid_request"},
		{name: "start without a zone", id: id, key: "k2", body: `{"start": "2030-01-01T10:00:00"}`, code: http.StatusBadRequest, problem: "invalid_request"},
		{name: "start in the past", id: id, key: "k3", body: startBody(time.Now().Add(-time.Hour)), code: http.StatusBadRequest, problem: "invalid_request"},
		{name: "outside opening hours", id: id, key: "k4", body: startBody(bookedSlot(t).Add(12 * time.Hour)), code: http.StatusBadRequest, problem: "invalid_request"},
		{name: "another tenant's appointment", id: "appointment:other:x", key: "k5", body: startBody(taken), code: http.StatusNotFound, problem: "not_found"},
		{name: "no such appointment", id: "appointment:demo:nonexistent", key: "k6", body: startBody(taken), code: http.StatusNotFound, problem: "not_found"},
		{name: "taken slot", id: id, key: "k7", body: startBody(taken), code: http.StatusConflict, problem: "slot_unavailable"},
		{name: "cancelled booking", id: id, key: "k8", body: startBody(taken.Add(time.Hour)), cancelFirst: true, code: http.StatusConflict, problem: "not_reschedulable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cancelFirst {
				code, body, _ := e.cancel(t, id, "cancel-1", "")
				require.Equal(t, http.StatusOK, code, body)
			}
			code, body, header := e.reschedule(t, tc.id, tc.key, tc.body)
			require.Equal(t, tc.code, code, body)
			require.Equal(t, "application/problem+json", header.Get("Content-Type"))
			require.Contains(t, body, `"code":"`+tc.problem+`"`)
			if tc.problem != "slot_unavailable" {
				return
			}
			var p struct {
				Alternatives []time.Time `json:"alternatives"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &p))
			require.NotEmpty(t, p.Alternatives, body)
			require.Equal(t, 1, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'confirmed'`, id),
				"the old booking stands")
			require.Zero(t, countRows(t, e.pool, `SELECT count(*) FROM calendar_reservations WHERE reference LIKE '%#move-%' AND status IN ('held', 'confirmed')`),
				"no reservation of the move left")
		})
	}
}
