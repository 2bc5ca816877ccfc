package lifecycle_test

// Unit tests of the reschedule Update on the time-skipping test
// environment: the calendar is a fake that logs its calls in order, so the
// tests see hold → confirm → cancel of the old booking, the undo of a move
// that failed, and the messages the outbox got.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// calendarFake answers holds and confirmations of moves; taken slots are
// refused with an alternative an hour later.
// newMoveEnv is newBookingEnv with the calendar steps of a move.
// rescheduleAt sends the reschedule Update with id at offset after the start.
// kinds are the outbox kinds of the messages sent.
// TestBookingRescheduleMoves: a move holds the new slot (its own
// reference, a deliberate second reservation), confirms it, then cancels
// the old booking; the booking then lives at the new slot: one message with
// the new time, reminders for it, Completed at its end. A retried Update
// and a second one to the same slot act no more.
func TestBookingRescheduleMoves(t *testing.T) {
	f, c := &bookingFake{}, &calendarFake{}
	env := newMoveEnv(t, f, c)
	in := lifecycleInput(env)
	newStart := in.SlotStart.Add(24 * time.Hour)
	var first, retried, same answer
	rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: newStart}, &first)
	rescheduleAt(env, time.Hour+time.Minute, "move-1", lifecycle.RescheduleRequest{Start: newStart}, &retried)
	rescheduleAt(env, time.Hour+2*time.Minute, "move-2", lifecycle.RescheduleRequest{Start: newStart, ResourceID: "bay-1"}, &same)
	var atOldEnd lifecycle.State
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(lifecycle.QueryLifecycle)
		require.NoError(t, err)
		require.NoError(t, v.Get(&atOldEnd))
	}, 73*time.Hour+time.Minute)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	var st lifecycle.State
	require.NoError(t, env.GetWorkflowResult(&st))

	ref := lifecycle.MoveReference(workflowtest.AppointmentID, 1)
	require.Equal(t, []string{
		"hold " + ref + " " + newStart.Format(time.RFC3339) + " second=true",
		"confirm hold_1",
		"cancel bk_1 " + workflowtest.AppointmentID,
	}, f.calls, "hold, confirm, then cancel the old booking; once")
	for _, a := range []answer{first, retried, same} {
		require.True(t, a.done)
		require.NoError(t, a.rejected)
		require.NoError(t, a.err)
		require.Equal(t, "bk_hold_1", a.state.BookingID)
		require.True(t, newStart.Equal(a.state.SlotStart))
		require.Len(t, a.state.Moves, 1)
	}
	mv := first.state.Moves[0]
	require.True(t, in.SlotStart.Equal(mv.From) && newStart.Equal(mv.To), "%v", mv)
	require.Equal(t, []string{"bk_hold_1", "bk_1", ref}, []string{mv.BookingID, mv.OldBookingID, mv.Reference})
	require.Equal(t, workflows.StatusConfirmed, atOldEnd.Status, "not completed at the old slot's end")
	require.Equal(t, workflows.StatusCompleted, st.Status)
	require.Zero(t, f.refunds+f.voids, "the deposit carries over")
	require.Equal(t, []string{"rescheduled_1", "reminder_24h0m0s_move_1", "reminder_2h0m0s_move_1"}, f.kinds())
	require.Contains(t, f.messages[0].Text, "verschoben")
	require.Contains(t, f.messages[0].Text, "20,00")
	for i, at := range []time.Time{newStart.Add(-24 * time.Hour), newStart.Add(-2 * time.Hour)} {
		require.WithinDuration(t, at, f.sentAt[i+1], time.Second, "reminder %d for the new time", i)
		require.Contains(t, f.messages[i+1].Text, "bk_hold_1")
	}
}

// TestBookingMoveOutlastsACalendarOutage: the calendar refuses the new
// slot's hold for longer than the step budget (8 refusals, budget 3; the
// test environment caps "no limit" at 10 attempts): the move asks with
// its key until it answers, then moves; the customer gets the move's
// message. Before, the move gave up unseen after the budget while its
// caller had been told it was under way.
func TestBookingMoveOutlastsACalendarOutage(t *testing.T) {
	f, c := &bookingFake{}, &calendarFake{holdsRefused: 8}
	env := newMoveEnv(t, f, c)
	in := lifecycleInput(env)
	in.Tuning.ActivityAttempts = 3
	newStart := in.SlotStart.Add(24 * time.Hour)
	var got answer
	rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: newStart}, &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())

	require.True(t, got.done)
	require.NoError(t, got.err, "refusals left: %d", c.holdsRefused)
	require.Zero(t, c.holdsRefused, "every refusal was met")
	require.Equal(t, []string{
		"hold " + lifecycle.MoveReference(workflowtest.AppointmentID, 1) + " " + newStart.Format(time.RFC3339) + " second=true",
		"confirm hold_1",
		"cancel bk_1 " + workflowtest.AppointmentID,
	}, f.calls)
	require.True(t, newStart.Equal(got.state.SlotStart))
	require.Equal(t, "rescheduled_1", f.kinds()[0], "the customer is told the move")
}

// TestBookingRescheduleRefusedOrFailed: a move that does not get the new
// slot leaves the old booking alone and undoes whatever it placed; a
// move to the slot the booking has does nothing.
func TestBookingRescheduleRefusedOrFailed(t *testing.T) {
	cases := []struct {
		name     string
		calendar calendarFake
		to       time.Duration // the new start, after the old one
		errType  string
		calls    func(ref string) []string
	}{
		{name: "taken slot: alternatives, old untouched", to: 24 * time.Hour, errType: activities.ErrTypeSlotUnavailable,
			calls: func(ref string) []string { return []string{"hold " + ref, "release " + ref} }},
		{name: "confirm fails: the new hold and booking are undone", to: 24 * time.Hour, errType: lifecycle.ErrTypeInvalidReschedule,
			calendar: calendarFake{confirmE: temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeCalendarFinal, nil)},
			calls: func(ref string) []string {
				return []string{"hold " + ref, "confirm hold_1", "cancel  " + ref, "release " + ref}
			}},
		{name: "same slot: nothing happens", to: 0, calls: func(string) []string { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c := &bookingFake{}, &tc.calendar
			env := newMoveEnv(t, f, c)
			in := lifecycleInput(env)
			to := in.SlotStart.Add(tc.to)
			if tc.errType == activities.ErrTypeSlotUnavailable {
				c.taken = to
			}
			var got answer
			rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: to}, &got)
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			var st lifecycle.State
			require.NoError(t, env.GetWorkflowResult(&st))

			require.True(t, got.done)
			require.NoError(t, got.rejected)
			var calls []string
			for _, call := range f.calls {
				calls = append(calls, strings.SplitN(call, " 20", 2)[0]) // without the time
			}
			require.Equal(t, tc.calls(lifecycle.MoveReference(workflowtest.AppointmentID, 1)), calls)
			require.Equal(t, "bk_1", st.BookingID, "the old booking stands")
			require.True(t, in.SlotStart.Equal(st.SlotStart))
			require.Empty(t, st.Moves)
			require.Equal(t, workflows.StatusCompleted, st.Status)
			require.Equal(t, []string{"reminder_24h0m0s", "reminder_2h0m0s"}, f.kinds(), "reminders of the old slot, no move message")
			if tc.errType == "" {
				require.NoError(t, got.err)
				return
			}
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.err, &appErr)
			require.Equal(t, tc.errType, appErr.Type())
			if tc.errType == activities.ErrTypeSlotUnavailable {
				var refused lifecycle.RescheduleRefused
				require.NoError(t, appErr.Details(&refused))
				require.Len(t, refused.Alternatives, 1)
				require.True(t, to.Add(time.Hour).Equal(refused.Alternatives[0]))
			}
		})
	}
}

// TestBookingRescheduleOldCancelFails: the new booking is confirmed but
// the old one cannot be cancelled: the booking is at the new slot and
// waits for a person (two bookings in the calendar), no message claims
// the move.
func TestBookingRescheduleOldCancelFails(t *testing.T) {
	f := &bookingFake{calendarE: temporal.NewNonRetryableApplicationError("invalid state", activities.ErrTypeCalendarFinal, nil)}
	env := newMoveEnv(t, f, &calendarFake{})
	in := lifecycleInput(env)
	var got answer
	rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: in.SlotStart.Add(24 * time.Hour)}, &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.True(t, got.done)
	require.NoError(t, got.err)
	require.Equal(t, workflows.StatusNeedsReview, got.state.Status)
	require.Equal(t, "bk_hold_1", got.state.BookingID)
	require.Equal(t, "case_1", got.state.ReviewCase)
	require.Equal(t, 1, f.cases)
	require.Empty(t, f.messages)
}

// cancelDuringAMove moves the booking a day on (its confirmation takes
// ten minutes) and cancels it two minutes into the move; it returns the
// cancel's answer.
func cancelDuringAMove(t *testing.T, f *bookingFake) answer {
	t.Helper()
	env := newMoveEnv(t, f, &calendarFake{confirmDelay: 10 * time.Minute})
	in := lifecycleInput(env)
	var moved, cancelled answer
	rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: in.SlotStart.Add(24 * time.Hour)}, &moved)
	cancelAt(env, time.Hour+2*time.Minute, "cancel-1", &cancelled)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, moved.err)
	require.NoError(t, cancelled.err)
	return cancelled
}

// TestBookingCancelDuringAMoveInReviewIsRecorded: a cancel that waited
// for a move which then needed a person (the old booking could not be
// cancelled) is in the review queue too: a cancellation_request case
// naming the move's case, besides the move's compensation_failed case.
// Before, the customer was told staff had the cancellation, and the only
// case described the move.
func TestBookingCancelDuringAMoveInReviewIsRecorded(t *testing.T) {
	f := &bookingFake{calendarE: temporal.NewNonRetryableApplicationError("invalid state", activities.ErrTypeCalendarFinal, nil)}
	cancelled := cancelDuringAMove(t, f)
	require.Equal(t, workflows.StatusNeedsReview, cancelled.state.Status)
	require.Len(t, f.reviews, 2, "the move's case and the cancel's")
	require.Equal(t, review.ReasonCompensationFailed, f.reviews[0].Reason)
	require.Equal(t, review.ReasonCancellationRequest, f.reviews[1].Reason)
	require.Equal(t, "customer asked", f.reviews[1].Details["cancel_reason"])
	require.Equal(t, "case_1", f.reviews[1].Details["move_case"])
	require.Equal(t, "case_2", cancelled.state.CancelCase)
	require.Zero(t, f.refunds, "nothing refunded behind the reviewer's back")
	require.Empty(t, f.messages)
}

// TestBookingRescheduleReminders: a move after a reminder was sent
// re-plans them for the new time; an offset whose time for the new slot
// has passed is not sent.
func TestBookingRescheduleReminders(t *testing.T) {
	f := &bookingFake{}
	env := newMoveEnv(t, f, &calendarFake{})
	in := lifecycleInput(env)
	// The 24 h reminder of the old slot goes at 48 h; the move at 50 h to
	// 60 h: its 24 h reminder would be at 36 h, passed.
	newStart := env.Now().Add(60 * time.Hour)
	var got answer
	rescheduleAt(env, 50*time.Hour, "move-1", lifecycle.RescheduleRequest{Start: newStart}, &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, got.err)
	require.Equal(t, []string{"reminder_24h0m0s", "rescheduled_1", "reminder_2h0m0s_move_1"}, f.kinds())
	require.WithinDuration(t, newStart.Add(-2*time.Hour), f.sentAt[2], time.Second)
	require.Contains(t, f.messages[2].Text, "bk_hold_1")
}

// TestBookingReminderDueDuringAMoveIsSentAfterIt: with a negative
// reminder lead (the drill's) a reminder is due at once, also for the new
// slot; one that comes due while the move is carried out waits for it and
// goes out for the new time instead of being dropped.
func TestBookingReminderDueDuringAMoveIsSentAfterIt(t *testing.T) {
	f := &bookingFake{}
	env := newMoveEnv(t, f, &calendarFake{confirmDelay: time.Minute})
	in := lifecycleInput(env)
	in.Reminders = []workflows.Duration{workflows.Duration(100 * time.Hour)}
	in.Tuning.ReminderLead = workflows.Duration(-87600 * time.Hour)
	var got answer
	rescheduleAt(env, 0, "move-1", lifecycle.RescheduleRequest{Start: in.SlotStart.Add(24 * time.Hour)}, &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, got.err)
	require.Equal(t, []string{"rescheduled_1", "reminder_100h0m0s_move_1"}, f.kinds(), "one reminder, for the new time")
}

// TestBookingRescheduleThenCancel: a cancel after a move cancels the new
// booking, by the window measured to the new slot, and refunds once.
func TestBookingRescheduleThenCancel(t *testing.T) {
	f := &bookingFake{}
	env := newMoveEnv(t, f, &calendarFake{})
	in := lifecycleInput(env)
	var moved, cancelled answer
	rescheduleAt(env, time.Hour, "move-1", lifecycle.RescheduleRequest{Start: in.SlotStart.Add(24 * time.Hour)}, &moved)
	// 80 h: the old slot has passed, the new one is 16 h away.
	cancelAt(env, 80*time.Hour, "cancel-1", &cancelled)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, moved.err)
	require.NoError(t, cancelled.rejected)
	require.NoError(t, cancelled.err)
	require.Equal(t, workflows.StatusCancelled, cancelled.state.Status)
	require.Equal(t, lifecycle.DepositKept, cancelled.state.Deposit, "16 h before the new slot: inside the window")
	require.Equal(t, "cancel bk_hold_1 "+lifecycle.MoveReference(workflowtest.AppointmentID, 1), f.calls[len(f.calls)-1])
}

// TestBookingRescheduleValidator: what the validator refuses before
// anything is recorded.
func TestBookingRescheduleValidator(t *testing.T) {
	cases := []struct {
		name    string
		at      time.Duration
		start   func(slot time.Time) time.Time
		cancel  bool
		errType string
	}{
		{"zero start", time.Hour, func(time.Time) time.Time { return time.Time{} }, false, lifecycle.ErrTypeInvalidReschedule},
		{"past start", time.Hour, func(s time.Time) time.Time { return s.Add(-72 * time.Hour) }, false, lifecycle.ErrTypeInvalidReschedule},
		{"slot has begun", 72*time.Hour + time.Minute, func(s time.Time) time.Time { return s.Add(24 * time.Hour) }, false, lifecycle.ErrTypeNotReschedulable},
		{"cancelled", 2 * time.Hour, func(s time.Time) time.Time { return s.Add(24 * time.Hour) }, true, lifecycle.ErrTypeNotReschedulable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newMoveEnv(t, f, &calendarFake{})
			in := lifecycleInput(env)
			if tc.cancel {
				cancelAt(env, time.Hour, "cancel-1", &answer{})
			}
			var got answer
			rescheduleAt(env, tc.at, "move-1", lifecycle.RescheduleRequest{Start: tc.start(in.SlotStart)}, &got)
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			require.True(t, got.done)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.rejected, &appErr)
			require.Equal(t, tc.errType, appErr.Type())
			for _, call := range f.calls {
				require.False(t, strings.HasPrefix(call, "hold"), "nothing held: %v", f.calls)
			}
		})
	}
}

// TestBookingCancelWaitsForAMove: a cancel that arrives while a move is
// under way waits for it and then cancels the new booking; the old one is
// cancelled by the move, once.
func TestBookingCancelWaitsForAMove(t *testing.T) {
	f := &bookingFake{}
	cancelled := cancelDuringAMove(t, f)
	require.Equal(t, workflows.StatusCancelled, cancelled.state.Status)
	require.Equal(t, lifecycle.DepositRefunded, cancelled.state.Deposit)
	ref := lifecycle.MoveReference(workflowtest.AppointmentID, 1)
	require.Equal(t, []string{"confirm hold_1", "cancel bk_1 " + workflowtest.AppointmentID, "cancel bk_hold_1 " + ref}, f.calls[1:])
	require.Equal(t, 1, f.refunds)
	require.Equal(t, []string{"rescheduled_1", lifecycle.MessageKindCancellation}, f.kinds())
}
