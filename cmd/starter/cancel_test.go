package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

var startedID = regexp.MustCompile(`started (appointment:\S+)`)

// TestCancelCommand books with "starter book", then cancels twice with
// "starter cancel" through the gateway's API on the real stack: the
// second run answers the first's state (the same derived key), and the
// payment API holds one refund.
func TestCancelCommand(t *testing.T) {
	pool, _, _ := starterStack(t)

	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"book", "--customer", "+4915112340003", "--service", "tire-change", "--start", "next"}, &stdout, &stderr),
		"stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	m := startedID.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	id := m[1]

	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"status", id}, &stdout, &stderr), "stderr: %s", stderr.String())
	require.Contains(t, stdout.String(), "lifecycle "+lifecycle.WorkflowID(id))

	var outs []string
	for range 2 {
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, exitOK, run([]string{"cancel", "--reason", "test", id}, &stdout, &stderr), "stderr: %s", stderr.String())
		outs = append(outs, stdout.String())
	}
	require.Contains(t, outs[0], "status    Cancelled")
	require.Equal(t, outs[0], outs[1], "the second run answers the first's state")
	var refunds int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM refunds r JOIN payment_intents p ON p.id = r.payment_intent_id
		WHERE p.booking_reference = $1`, id).Scan(&refunds))
	// "next" is the next free slot: within 24 h of it the deposit is kept.
	want := 0
	if strings.Contains(outs[0], "deposit   refunded") {
		want = 1
	} else {
		require.Contains(t, outs[0], "deposit   kept")
	}
	require.Equal(t, want, refunds, "one refund for a refunded deposit, none for a kept one")
}

// TestRescheduleCommand books with "starter book", then moves the booking
// with "starter reschedule --start next" and runs the same move again
// with the start it printed: one move (the same derived key), the booking
// at the new slot.
func TestRescheduleCommand(t *testing.T) {
	pool := rescheduleStack(t)
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"book", "--customer", "+4915112340004", "--service", "tire-change", "--start", "next"}, &stdout, &stderr),
		"stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	m := startedID.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	id := m[1]

	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"reschedule", "--start", "next", id}, &stdout, &stderr), "stderr: %s", stderr.String())
	next := regexp.MustCompile(`next free slot: (\S+)`).FindStringSubmatch(stdout.String())
	require.NotNil(t, next, stdout.String())
	first := strings.TrimPrefix(stdout.String(), next[0]+"\n")
	require.Contains(t, first, "status    Confirmed")
	slot := regexp.MustCompile(`slot      (\S+)`).FindStringSubmatch(first)
	require.NotNil(t, slot, first)
	want, err := time.Parse(time.RFC3339, next[1])
	require.NoError(t, err)
	got, err := time.Parse(time.RFC3339, slot[1])
	require.NoError(t, err)
	require.True(t, want.Equal(got), "moved to %s, want %s", got, want)

	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"reschedule", "--start", next[1], id}, &stdout, &stderr), "stderr: %s", stderr.String())
	require.Equal(t, first, stdout.String(), "the same move: the first answer")
	var moved, active int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE reference <> $1),
		count(*) FILTER (WHERE status IN ('held', 'confirmed')) FROM calendar_reservations WHERE reference LIKE $1 || '%'`, id).Scan(&moved, &active))
	require.Equal(t, 1, moved, "one reservation of a move")
	require.Equal(t, 1, active, "one active reservation")
}

// rescheduleStack is starterStack for the tests that need only the
// database.
func rescheduleStack(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, _, _ := starterStack(t)
	return pool
}

// TestBookAgainAfterCancelCommand: "starter book", "starter cancel", then
// the same "starter book" again books anew under an ID of its own (it
// used to answer "already booked" with nothing in the calendar), and a
// third "starter book" answers that second booking.
func TestBookAgainAfterCancelCommand(t *testing.T) {
	pool, _, _ := starterStack(t)
	slot := testsupport.Slot(t, time.Wednesday, 10).Format(time.RFC3339)
	book := []string{"book", "--customer", "+4915112340031", "--service", "tire-change", "--start", slot, "--wait"}
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(book, &stdout, &stderr), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	m := startedID.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	first := m[1]
	stdout.Reset()
	require.Equal(t, exitOK, run([]string{"cancel", first}, &stdout, &stderr), "stderr: %s", stderr.String())
	require.Contains(t, stdout.String(), "status    Cancelled")

	stdout.Reset()
	require.Equal(t, exitOK, run(book, &stdout, &stderr), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	m = startedID.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, "a new booking started: %s", stdout.String())
	again := m[1]
	require.NotEqual(t, first, again)
	stdout.Reset()
	require.Equal(t, exitOK, run(book, &stdout, &stderr), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	require.Contains(t, stdout.String(), "already booked: "+again)

	var confirmed, cancelled int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE status = 'confirmed'), count(*) FILTER (WHERE status = 'cancelled')
		FROM calendar_reservations WHERE reference IN ($1, $2)`, first, again).Scan(&confirmed, &cancelled))
	require.Equal(t, []int{1, 1}, []int{confirmed, cancelled}, "the rebooking confirmed, the first cancelled")
}
