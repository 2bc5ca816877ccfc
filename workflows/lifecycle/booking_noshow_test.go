package lifecycle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// requireRejected asserts that a was refused by a validator with errType.
func requireRejected(t *testing.T, a answer, errType string) {
	t.Helper()
	require.True(t, a.done, "answered")
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, a.rejected, &appErr)
	require.Equal(t, errType, appErr.Type(), appErr.Message())
}

// TestBookingNoShow: the slot of lifecycleInput begins at 72 h and ends at
// 73 h; the linger lasts until 97 h.
func TestBookingNoShow(t *testing.T) {
	noShow := lifecycle.NoShowRequest{Note: "did not come"}
	cases := []struct {
		name string
		// at is when the first no_show arrives; cancelAt, if set, when a
		// cancel arrives before it.
		at, cancelAt time.Duration
		noDeposit    bool
		// rejected: the first no_show's refusal; else want is its answer.
		rejected string
		want     workflows.BookingStatus
		deposit  lifecycle.DepositOutcome
		refunds  int
	}{
		{name: "before the slot began: refused", at: 72*time.Hour - time.Second,
			rejected: lifecycle.ErrTypeNotNoShow, want: workflows.StatusCompleted},
		{name: "during the slot: NoShow, deposit kept", at: 72*time.Hour + 10*time.Minute,
			want: workflows.StatusNoShow, deposit: lifecycle.DepositKept},
		{name: "during the linger day: NoShow, deposit kept", at: 80 * time.Hour,
			want: workflows.StatusNoShow, deposit: lifecycle.DepositKept},
		{name: "without a deposit: nothing kept", at: 80 * time.Hour, noDeposit: true,
			want: workflows.StatusNoShow, deposit: lifecycle.DepositNone},
		{name: "a cancelled booking: refused", cancelAt: time.Hour, at: 80 * time.Hour,
			rejected: lifecycle.ErrTypeNotNoShow, want: workflows.StatusCancelled, refunds: 1},
		{name: "a note too long: refused", at: 80 * time.Hour,
			rejected: lifecycle.ErrTypeInvalidNoShow, want: workflows.StatusCompleted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &bookingFake{}
			env := newBookingEnv(t, f)
			in := lifecycleInput(env)
			start := env.Now()
			if tc.noDeposit {
				in.Deposit, in.IntentID = 0, ""
			}
			if tc.cancelAt > 0 {
				updateAt(env, lifecycle.UpdateCancel, tc.cancelAt, "cancel-1", lifecycle.CancelRequest{Reason: "x"}, &answer{})
			}
			req := noShow
			if tc.rejected == lifecycle.ErrTypeInvalidNoShow {
				req.Note = string(make([]byte, 501))
			}
			var first, again, retry, cancelAfter answer
			updateAt(env, lifecycle.UpdateNoShow, tc.at, "no-show-1", req, &first)
			if tc.rejected == "" {
				// Another no_show, a retry of the first, and a cancel after it.
				updateAt(env, lifecycle.UpdateNoShow, tc.at+time.Minute, "no-show-2", noShow, &again)
				updateAt(env, lifecycle.UpdateNoShow, tc.at+2*time.Minute, "no-show-1", req, &retry)
				updateAt(env, lifecycle.UpdateCancel, tc.at+3*time.Minute, "cancel-after", lifecycle.CancelRequest{Reason: "x"}, &cancelAfter)
			}
			env.ExecuteWorkflow(lifecycle.WorkflowName, in)

			require.True(t, env.IsWorkflowCompleted(), "the workflow ends")
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, start.Add(97*time.Hour), env.Now(), "it ends after the linger, as a completed booking does")
			var st lifecycle.State
			require.NoError(t, env.GetWorkflowResult(&st))
			require.Equal(t, tc.want, st.Status, st.Reason)
			require.Equal(t, tc.refunds, f.refunds, "refunds at the payment API")
			require.Zero(t, f.voids)
			require.Zero(t, f.cases)
			for _, m := range f.messages {
				require.Contains(t, []string{lifecycle.MessageKindReminder + "24h0m0s", lifecycle.MessageKindReminder + "2h0m0s",
					lifecycle.MessageKindCancellation}, m.Kind, "no message about a no-show")
			}
			if tc.rejected != "" {
				requireRejected(t, first, tc.rejected)
				return
			}
			require.NoError(t, first.rejected)
			require.NoError(t, first.err)
			require.Equal(t, workflows.StatusNoShow, first.state.Status)
			require.Equal(t, tc.deposit, first.state.Deposit, first.state.Reason)
			require.Contains(t, first.state.Reason, "did not come", "the note is kept")
			require.Equal(t, first.state, again.state, "NoShow again answers the same state")
			require.Equal(t, first.state, retry.state, "a retried no_show answers the same state")
			require.Equal(t, first.state.Status, st.Status)
			require.Zero(t, f.cancels, "the calendar booking stays")
			requireRejected(t, cancelAfter, lifecycle.ErrTypeNotCancellable)
			require.Contains(t, cancelAfter.rejected.Error(), "no-show")
		})
	}
}
