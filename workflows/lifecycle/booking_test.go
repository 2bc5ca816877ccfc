package lifecycle_test

// Unit tests of BookingWorkflow on the SDK's time-skipping test
// environment: every activity is mocked by a small fake that counts what
// reached the calendar, the payment API and the outbox; the cancel Update
// is sent at chosen workflow times.

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// bookingFake counts the lifecycle's effects downstream.
// lifecycleInput is a booking whose slot starts in three days (test
// environment time) and lasts an hour, with a captured 20 € deposit.
// answer is one Update's outcome as the caller saw it.
// cancelAt sends the cancel Update with id at offset after the start.
func TestBookingCancelAndComplete(t *testing.T) {
	cases := []struct {
		name string
		// at is when the cancel arrives (after the start); 0: no cancel.
		at        time.Duration
		noDeposit bool
		want      workflows.BookingStatus
		deposit   lifecycle.DepositOutcome
		refunds   int
		template  string // a word of the message sent
		rejected  bool
		// offsets overrides the default reminders (24 h, 2 h); reminders
		// are the kinds of the reminders expected to be sent.
		offsets   []time.Duration
		reminders []string
	}{
		{name: "free cancel refunds the deposit", at: time.Hour, want: workflows.StatusCancelled,
			deposit: lifecycle.DepositRefunded, refunds: 1, template: "erstatten"},
		{name: "cancel exactly 24 h before is free", at: 48 * time.Hour, want: workflows.StatusCancelled,
			deposit: lifecycle.DepositRefunded, refunds: 1, template: "erstatten", offsets: []time.Duration{2 * time.Hour}},
		{name: "late cancel keeps the deposit, no reminder after it", at: 61 * time.Hour, want: workflows.StatusCancelled,
			deposit: lifecycle.DepositKept, template: "behalten wir", reminders: []string{"reminder_24h0m0s"}},
		{name: "cancel without deposit", at: time.Hour, noDeposit: true, want: workflows.StatusCancelled,
			deposit: lifecycle.DepositNone, template: "ist storniert."},
		{name: "cancel after completion is refused", at: 75 * time.Hour, want: workflows.StatusCompleted, rejected: true,
			reminders: []string{"reminder_24h0m0s", "reminder_2h0m0s"}},
		{name: "cancel after the slot began is refused", at: 72*time.Hour + time.Minute, want: workflows.StatusCompleted, rejected: true,
			reminders: []string{"reminder_24h0m0s", "reminder_2h0m0s"}},
		{name: "completed at the slot's end, reminded twice", want: workflows.StatusCompleted,
			reminders: []string{"reminder_24h0m0s", "reminder_2h0m0s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			in := lifecycleInput(env)
			if tc.noDeposit {
				in.Deposit, in.IntentID = 0, ""
			}
			in.Reminders = tc.offsets
			var first, again answer
			if tc.at > 0 {
				cancelAt(env, tc.at, "cancel-1", &first)
				// A second cancel with another ID, and a retry of the first.
				cancelAt(env, tc.at+time.Minute, "cancel-2", &again)
				cancelAt(env, tc.at+2*time.Minute, "cancel-1", &answer{})
			}
			var atEnd lifecycle.State
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(lifecycle.QueryLifecycle)
				require.NoError(t, err)
				require.NoError(t, v.Get(&atEnd))
			}, 73*time.Hour+time.Minute)
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var st lifecycle.State
			require.NoError(t, env.GetWorkflowResult(&st))

			require.Equal(t, tc.want, st.Status, st.Reason)
			require.Equal(t, tc.want, atEnd.Status, "the state just after the slot's end")
			require.Equal(t, tc.refunds, f.refunds, "refunds at the payment API")
			require.Zero(t, f.voids)
			require.Zero(t, f.cases)
			var reminders []string
			cancellations := 0
			for _, m := range f.messages {
				if m.Kind == lifecycle.MessageKindCancellation {
					cancellations++
					continue
				}
				require.Zero(t, cancellations, "a reminder after the cancellation: %s", m.Kind)
				reminders = append(reminders, m.Kind)
			}
			require.Equal(t, tc.reminders, reminders, "reminders sent")
			if tc.at == 0 {
				require.Zero(t, f.cancels)
				require.Zero(t, cancellations)
				return
			}
			if tc.rejected {
				require.Error(t, first.rejected)
				var appErr *temporal.ApplicationError
				require.ErrorAs(t, first.rejected, &appErr)
				require.Equal(t, lifecycle.ErrTypeNotCancellable, appErr.Type())
				require.Zero(t, f.cancels)
				require.Zero(t, cancellations)
				return
			}
			require.True(t, first.done && again.done, "both cancels answered")
			require.NoError(t, first.rejected)
			require.NoError(t, first.err)
			require.Equal(t, workflows.StatusCancelled, first.state.Status)
			require.Equal(t, tc.deposit, first.state.Deposit, first.state.Reason)
			require.Equal(t, first.state, again.state, "a second cancel answers the same state")
			require.Equal(t, 1, f.cancels, "the calendar booking cancelled once")
			require.Equal(t, 1, cancellations, "one cancellation message")
			last := f.messages[len(f.messages)-1]
			require.Equal(t, lifecycle.MessageKindCancellation, last.Kind)
			require.Equal(t, workflowtest.AppointmentID, last.Reference)
			require.Contains(t, last.Text, tc.template)
			if tc.deposit == lifecycle.DepositRefunded {
				require.Equal(t, "re_1", st.RefundID)
			}
		})
	}
}

// TestBookingCancelCalendarFailureNeedsReview: a calendar that finally
// refuses to cancel hands the booking to a person; the deposit is left
// alone and no message claims a cancellation.
func TestBookingCancelCalendarFailureNeedsReview(t *testing.T) {
	f := &bookingFake{calendarE: temporal.NewNonRetryableApplicationError("invalid state", activities.ErrTypeCalendarFinal, nil)}
	env := newBookingEnv(t, f)
	var first answer
	cancelAt(env, time.Hour, "cancel-1", &first)
	env.ExecuteWorkflow(lifecycle.WorkflowName, lifecycleInput(env))
	require.NoError(t, env.GetWorkflowError())
	require.True(t, first.done)
	require.NoError(t, first.err)
	require.Equal(t, workflows.StatusNeedsReview, first.state.Status)
	require.Equal(t, "case_1", first.state.ReviewCase)
	require.Equal(t, 1, f.cases)
	require.Zero(t, f.refunds)
	require.Empty(t, f.messages)
}

// TestBookingReminders: reminders at the offsets, moved out of the
// tenant's quiet hours, and none that would come right after the
// confirmation.
func TestBookingReminders(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	quiet := &tenants.Terms{Language: "de", Timezone: "Europe/Berlin", QuietOpens: "21:00", QuietCloses: "08:00"}
	local := func(now time.Time, days, hour, minute int) time.Time {
		d := now.In(berlin)
		return time.Date(d.Year(), d.Month(), d.Day()+days, hour, minute, 0, 0, berlin)
	}
	cases := []struct {
		name  string
		terms *tenants.Terms
		slot  func(now time.Time) time.Time
		// want are the send times, from the slot's start.
		want func(slot time.Time) []time.Time
	}{
		{"at the offsets", nil, func(now time.Time) time.Time { return local(now, 3, 9, 0) },
			func(s time.Time) []time.Time { return []time.Time{s.Add(-24 * time.Hour), s.Add(-2 * time.Hour)} }},
		{"a reminder in quiet hours waits for their end", quiet, func(now time.Time) time.Time { return local(now, 3, 9, 0) },
			func(s time.Time) []time.Time { return []time.Time{s.Add(-24 * time.Hour), s.Add(-time.Hour)} }},
		{"before a slot earlier than their end: the evening before", quiet, func(now time.Time) time.Time { return local(now, 3, 7, 30) },
			func(s time.Time) []time.Time {
				return []time.Time{s.Add(-24 * time.Hour).Add(30 * time.Minute), local(s, -1, 20, 59)}
			}},
		{"slot too close: none", nil, func(now time.Time) time.Time { return now.Add(150 * time.Minute) },
			func(time.Time) []time.Time { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			in := lifecycleInput(env)
			in.Terms, in.SlotStart = tc.terms, tc.slot(env.Now())
			in.SlotEnd = in.SlotStart.Add(time.Hour)
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			var st lifecycle.State
			require.NoError(t, env.GetWorkflowResult(&st))
			require.Equal(t, workflows.StatusCompleted, st.Status)
			want := tc.want(in.SlotStart)
			require.Len(t, f.sentAt, len(want), "reminders sent: %v", f.messages)
			for i, at := range want {
				require.WithinDuration(t, at, f.sentAt[i], time.Second, "reminder %d", i)
				require.Contains(t, f.messages[i].Text, "Erinnerung")
			}
			if len(want) > 0 {
				require.Contains(t, f.messages[0].Text, "absagen oder verschieben", "the first reminder says how to cancel or move")
			}
		})
	}
}

// TestBookingReminderLead: Tuning.ReminderLead replaces the hour after the
// confirmation in which no reminder is sent; negative, it sends reminders
// already due at once (the chaos drill's setting). Zero keeps the hour
// ("slot too close: none" above).
func TestBookingReminderLead(t *testing.T) {
	cases := []struct {
		name string
		lead time.Duration
		// want are the send times, from the lifecycle's start.
		want func(start, slot time.Time) []time.Time
	}{
		{"a short lead sends the reminder due in 30 minutes", time.Minute,
			func(_, slot time.Time) []time.Time { return []time.Time{slot.Add(-2 * time.Hour)} }},
		{"a negative lead sends the overdue reminder at once, then the due one", -365 * 24 * time.Hour,
			func(start, slot time.Time) []time.Time { return []time.Time{start, slot.Add(-2 * time.Hour)} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			in := lifecycleInput(env)
			start := env.Now()
			in.SlotStart = start.Add(150 * time.Minute)
			in.SlotEnd = in.SlotStart.Add(time.Hour)
			in.Tuning.ReminderLead = tc.lead
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			want := tc.want(start, in.SlotStart)
			require.Len(t, f.sentAt, len(want), "reminders sent: %v", f.messages)
			for i, at := range want {
				require.WithinDuration(t, at, f.sentAt[i], time.Second, "reminder %d", i)
			}
		})
	}
}

// TestBookingCancelWaitsForAReminder: a cancel that arrives while a
// reminder is being sent waits for it (no reminder after the
// cancellation), and its refund is decided by when it arrived, not by
// when it could go on.
func TestBookingCancelWaitsForAReminder(t *testing.T) {
	f := &bookingFake{sendDelay: 10 * time.Minute}
	env := newBookingEnv(t, f)
	in := lifecycleInput(env)
	// The reminder goes at 47h55m and takes until 48h05m; the cancel comes
	// at 47h58m, 24h02m before the slot: free, though it goes on after the
	// window has closed.
	in.Reminders = []time.Duration{24*time.Hour + 5*time.Minute}
	var first answer
	cancelAt(env, 47*time.Hour+58*time.Minute, "cancel-1", &first)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.True(t, first.done)
	require.NoError(t, first.err)
	require.Equal(t, workflows.StatusCancelled, first.state.Status)
	require.Equal(t, lifecycle.DepositRefunded, first.state.Deposit, first.state.Reason)
	require.Equal(t, 1, f.refunds)
	require.Len(t, f.messages, 2)
	require.Equal(t, lifecycle.MessageKindReminder+"24h5m0s", f.messages[0].Kind)
	require.Equal(t, lifecycle.MessageKindCancellation, f.messages[1].Kind)
	require.False(t, f.sentAt[1].Before(f.sentAt[0].Add(10*time.Minute)), "the cancellation waited for the reminder")
}

// TestBookingCancelOnlyIfRefunded: a cancel sent on the condition that it
// refunds (the conversation did not ask the customer about keeping the
// deposit) is refused by the validator inside the booking's window, and
// nothing happens; outside it, it cancels and refunds.
func TestBookingCancelOnlyIfRefunded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       time.Duration // after the start; the slot is at 72 h
		rejected bool
	}{
		{"inside the window: refused, nothing done", 60 * time.Hour, true},
		{"outside the window: cancelled and refunded", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			var got answer
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(lifecycle.UpdateCancel, "c-1", &testsuite.TestUpdateCallback{
					OnAccept:   func() {},
					OnReject:   func(err error) { got.rejected, got.done = err, true },
					OnComplete: func(any, error) { got.done = true },
				}, lifecycle.CancelRequest{Reason: "by message", OnlyIfRefunded: true})
			}, tc.at)
			env.ExecuteWorkflow(lifecycle.WorkflowName, lifecycleInput(env))
			require.NoError(t, env.GetWorkflowError())
			require.True(t, got.done)
			if !tc.rejected {
				require.NoError(t, got.rejected)
				require.Equal(t, 1, f.cancels)
				require.Equal(t, 1, f.refunds)
				return
			}
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.rejected, &appErr)
			require.Equal(t, lifecycle.ErrTypeDepositWouldBeKept, appErr.Type())
			require.Zero(t, f.cancels, "the booking stands")
			require.Zero(t, f.refunds)
		})
	}
}

// TestBookingIsPublishedCancelledBeforeTheCustomerIsTold: dedup reads the
// published status, so a customer who books the same slot again the
// moment the cancellation message arrives must find the booking over.
func TestBookingIsPublishedCancelledBeforeTheCustomerIsTold(t *testing.T) {
	f := &bookingFake{}
	env := newBookingEnv(t, f)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if v, ok := sa.GetKeyword(workflows.BookingStatusKey); ok {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.published = append(f.published, workflows.BookingStatus(v))
		}
	}).Return(nil)
	var got answer
	cancelAt(env, time.Hour, "cancel-1", &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, lifecycleInput(env))
	require.NoError(t, env.GetWorkflowError())
	require.True(t, got.done)
	require.NoError(t, got.err)
	require.Len(t, f.messages, 1, "the cancellation message")
	require.Equal(t, []workflows.BookingStatus{workflows.StatusCancelled}, f.statusAtMessage,
		"the customer is told only once the booking reads cancelled")
}

// TestBookingReadsCancellingWhileItsCancelWaitsForAReminder: a cancel that
// arrives while a reminder is being sent waits for it, and the booking
// reads Cancelling from the moment the cancel is taken, not only after the
// wait: a wish for the same slot meanwhile must hear that the booking is
// being cancelled (#48 item 1).
func TestBookingReadsCancellingWhileItsCancelWaitsForAReminder(t *testing.T) {
	f := &bookingFake{sendDelay: 10 * time.Minute}
	env := newBookingEnv(t, f)
	type published struct {
		at     time.Time
		status workflows.BookingStatus
	}
	var statuses []published
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(workflows.BookingStatusKey); ok {
			statuses = append(statuses, published{env.Now(), workflows.BookingStatus(v)})
		}
	}).Return(nil)
	in := lifecycleInput(env)
	in.Reminders = []time.Duration{24*time.Hour + 5*time.Minute} // sent at 47h55m, until 48h05m
	var got answer
	cancelAt(env, 47*time.Hour+58*time.Minute, "cancel-1", &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.True(t, got.done)
	require.NoError(t, got.err)
	cancelAt := env.Now()
	for _, p := range statuses {
		if p.status == workflows.StatusCancelling {
			cancelAt = p.at
			break
		}
	}
	start := in.SlotStart.Add(-72 * time.Hour)
	require.Equal(t, start.Add(47*time.Hour+58*time.Minute), cancelAt, "Cancelling published when the cancel was taken, during the reminder")
	require.Equal(t, workflows.StatusCancelled, statuses[len(statuses)-1].status)
	for _, p := range statuses[1:] {
		require.NotEqual(t, workflows.StatusConfirmed, p.status, "never back to Confirmed once cancelling")
	}
}

// TestCancelTakenAsTheBookingStartsNeverReadsConfirmedAgain: a cancel
// that reaches the booking in its first workflow task (an early cancel
// racing the lifecycle's start) publishes Cancelling, and nothing
// publishes Confirmed after it: the setup's own "booked" was seen
// published after the cancel's Cancelling, and a wish for the slot was
// then merged into a booking about to end.
func TestCancelTakenAsTheBookingStartsNeverReadsConfirmedAgain(t *testing.T) {
	env := newBookingEnv(t, &bookingFake{})
	var statuses []workflows.BookingStatus
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(workflows.BookingStatusKey); ok {
			statuses = append(statuses, workflows.BookingStatus(v))
		}
	}).Return(nil)
	var got answer
	cancelAt(env, 0, "cancel-1", &got)
	env.ExecuteWorkflow(lifecycle.WorkflowName, lifecycleInput(env))
	require.NoError(t, env.GetWorkflowError())
	require.True(t, got.done)
	require.NoError(t, got.err)
	t.Logf("published: %v", statuses)
	cancelling := slices.Index(statuses, workflows.StatusCancelling)
	require.GreaterOrEqual(t, cancelling, 0)
	require.NotContains(t, statuses[cancelling:], workflows.StatusConfirmed, "never back to Confirmed once cancelling")
}
