package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestMatrixRescheduleWorkerKilledMidMove: the worker dies while a move is
// half done (the new hold committed, or the new booking confirmed, the
// answer not reported); a new worker retries with the same keys and
// finishes the move: exactly one active reservation (the move's, confirmed),
// the old booking cancelled, one charge and no refund, one move message.
// A reconciler sweep then finds nothing to repair: the move's reference is
// the confirmed appointment's.
func TestMatrixRescheduleWorkerKilledMidMove(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path string
		step       string // the step whose answer was lost
	}{
		{"after the new hold", "/v1/holds", "hold new slot"},
		{"after the new booking is confirmed", "/v1/holds/", "confirm new slot"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			w1 := e.startWorker(t)
			req := request(t, "+491511234570"+string(rune('0'+i)), time.Wednesday, 16)
			r, st := run(t, e, req)
			require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
			id := r.GetID()
			to := testsupport.Slot(t, time.Thursday, 10)

			pause := e.calendar.PauseAt("POST", tc.path, true)
			pause.Drop = true
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			type result struct {
				st  lifecycle.State
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := lifecycle.Reschedule(ctx, e.tc, id, lifecycle.RescheduleUpdateID("demo", "move-1"), lifecycle.RescheduleRequest{Start: to})
				done <- result{s, err}
			}()
			select {
			case <-pause.Reached():
			case <-ctx.Done():
				t.Fatal("the move never reached the calendar")
			}
			w1.Stop()
			pause.Release()
			e.startWorkerWithReconciler(t)
			var got result
			select {
			case got = <-done:
			case <-ctx.Done():
				t.Fatal("the move never answered")
			}
			require.NoError(t, got.err)
			require.Equal(t, workflows.StatusConfirmed, got.st.Status, got.st.Reason)
			require.True(t, to.Equal(got.st.SlotStart))
			for _, s := range got.st.Steps {
				if s.Name == tc.step {
					require.Greater(t, s.Attempt, int32(1), "%s retried on the new worker with its key", s.Name)
				}
			}

			require.Equal(t, 1, activeReservations(t, e, id), "exactly one active reservation")
			require.Equal(t, map[string]int{"confirmed": 1}, e.effects(t, req.Customer, to).Reservations)
			require.Equal(t, effects{Reservations: map[string]int{"cancelled": 1}, Intents: map[string]int{"succeeded": 1}, Captured: 2000, Messages: 2},
				e.effects(t, req.Customer, req.SlotStart), "the old booking cancelled; one charge, no refund; the confirmation and one move message")

			require.Empty(t, e.reconcile(t).Repairs, "nothing of the move is an orphan")
			require.Equal(t, 1, activeReservations(t, e, id))
		})
	}
}

// activeReservations counts the held or confirmed reservations of the
// appointment id and its moves.
func activeReservations(t *testing.T, e env, id string) int {
	t.Helper()
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM calendar_reservations
		WHERE (reference = $1 OR reference LIKE $1 || '#move-%') AND status IN ('held', 'confirmed')`, id).Scan(&n))
	return n
}

// TestReconcilerJudgesAMoveByItsAppointment: a hold under a move's
// reference whose appointment never existed is released like the
// appointment's own (the matrix test above shows the other side: a move
// of a confirmed appointment is left alone).
func TestReconcilerJudgesAMoveByItsAppointment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorkerWithReconciler(t)
	tok, ok := e.cfg.TokenFor("demo")
	require.True(t, ok)
	ghost := lifecycle.MoveReference(appointment.WorkflowID("demo", "ghost-"+testsupport.TaskQueue(t)), 1)
	customer, slot := "+4915112340017", testsupport.Slot(t, time.Tuesday, 9)
	_, err := calendar.NewClient(e.cfg.CalendarURL, tok).CreateHold(context.Background(), "k-"+ghost, calendar.HoldRequest{
		Service: "tire-change", Start: slot, Customer: customer, Reference: ghost,
	})
	require.NoError(t, err)
	require.Equal(t, map[string]int{activities.RepairReleaseHold: 1}, e.reconcile(t).Repairs)
	require.Equal(t, map[string]int{"released": 1}, e.effects(t, customer, slot).Reservations)
}
