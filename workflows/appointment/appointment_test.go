package appointment_test

// Unit tests of AppointmentWorkflow against the fake downstream of
// saga_fake_test.go: the happy path, a final failure at each step with its
// compensations, cancellation and an expired hold.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
	"github.com/bookonce/bookonce/workflows/internal/workflowtest"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

func TestUnitHappyPath(t *testing.T) {
	env, f := newUnitEnv(t)
	env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, unitWorkflowID, st.Reference)
	require.Equal(t, "hold-1", st.HoldID)
	require.Equal(t, "booking-hold-1", st.BookingID)
	require.Equal(t, deposit.Captured, st.Payment)
	require.Equal(t, "pi_1", st.IntentID)
	require.Equal(t, "msg_1", st.MessageID)
	require.Empty(t, st.Reason)
	// The confirmed booking is handed to its lifecycle workflow.
	require.Equal(t, lifecycle.WorkflowID(unitWorkflowID), st.Lifecycle)
	require.NotNil(t, f.lifecycle)
	require.Equal(t, unitWorkflowID, f.lifecycle.Reference)
	require.Equal(t, "booking-hold-1", f.lifecycle.BookingID)
	require.Equal(t, int64(2000), f.lifecycle.Deposit, "the captured deposit")
	require.Equal(t, "pi_1", f.lifecycle.IntentID)

	require.Equal(t, []string{
		"hold slot: ok", "authorize deposit: ok", "confirm hold: ok",
		"capture deposit: ok", "send confirmation: ok",
	}, unitStepNames(st))
	// Each step carries the key its activity sent downstream, derived from
	// the execution: all well-formed, all different.
	sent := map[string]string{
		"hold slot":         f.Key("appointment", "hold-slot"),
		"authorize deposit": f.Key("appointment", "authorize-deposit"),
		"confirm hold":      f.Key("appointment", "confirm-hold"),
		"capture deposit":   f.Key("appointment", "capture-deposit"),
		"send confirmation": f.Key("appointment", "send-confirmation"),
	}
	seen := map[string]bool{}
	for _, s := range st.Steps {
		require.Regexp(t, workflowtest.KeyPattern, s.Key, s.Name)
		require.Equal(t, sent[s.Name], s.Key, "%s: the recorded key is the one sent", s.Name)
		require.Equal(t, int32(1), s.Attempt, s.Name)
		require.NotEmpty(t, s.DownstreamID, s.Name)
		require.False(t, seen[s.Key], "%s: every step has its own key", s.Name)
		seen[s.Key] = true
	}

	// Exactly the forward steps, in order; no compensation ran.
	require.Equal(t, []string{
		"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold",
		"CaptureDeposit capture-deposit", "SendConfirmation send-confirmation",
	}, f.Sequence(""))
	for _, name := range []string{"ReleaseHold", "VoidDeposit", "CancelBooking", "FindHold", "OpenReviewCase"} {
		require.Empty(t, f.Started(name), "%s must not run on the happy path", name)
	}

	// The business reference travels downstream with the hold and the deposit.
	require.Equal(t, unitWorkflowID, f.Input("appointment", "hold-slot").(activities.HoldSlotInput).Reference)
	dep := f.Input("appointment", "authorize-deposit").(activities.DepositInput)
	require.Equal(t, unitWorkflowID, dep.Reference)
	require.Equal(t, int64(2000), dep.Amount)
	require.Equal(t, "pi_1", f.Input("appointment", "capture-deposit").(activities.IntentInput).IntentID)
	require.False(t, f.Live())

	// The card deposit ran as the appointment's own steps: no payment saga.
	require.Nil(t, f.child)
	require.Empty(t, f.Sequence("payment"))
}

func TestUnitNoDepositSkipsPaymentSaga(t *testing.T) {
	env, f := newUnitEnv(t)
	req := unitRequest()
	req.DepositAmount = 0
	env.ExecuteWorkflow(appointment.WorkflowName, req)
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "SendConfirmation send-confirmation"}, f.Sequence(""))
	require.Empty(t, st.Payment)
}

// TestUnitFailureAtEachStep injects a final failure at every step and
// checks the outcome and that exactly the compensations of the steps taken
// so far ran, in reverse order of registration (release hold is registered
// first, then void deposit, then cancel booking).
func TestUnitFailureAtEachStep(t *testing.T) {
	alt1 := time.Date(2030, 3, 5, 14, 0, 0, 0, time.UTC)
	alt2 := time.Date(2030, 3, 5, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		inject      func(f *unitFake)
		status      workflows.BookingStatus
		reason      string         // contained
		payment     deposit.Status // "" = not checked
		appointment []string       // started activities of the appointment saga
		payments    []string       // started activities of the payment saga
		check       func(t *testing.T, st appointment.State, f *unitFake)
	}{
		{
			name: "hold: slot unavailable",
			inject: func(f *unitFake) {
				f.holdSlot = func(context.Context, activities.HoldSlotInput) (activities.HoldSlotResult, error) {
					return activities.HoldSlotResult{}, unitFinalErr(activities.ErrTypeSlotUnavailable, []calendar.Slot{{ResourceID: "bay-1", Start: alt1}, {ResourceID: "bay-2", Start: alt2}})
				}
			},
			status: workflows.StatusRejected, reason: "slot_unavailable",
			// Only the release registered before the hold runs, and it
			// releases by reference (no hold ID is known).
			// The customer who lost the slot is told the free ones.
			appointment: []string{"HoldSlot hold-slot", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-alternatives"},
			payments:    []string{},
			check: func(t *testing.T, st appointment.State, f *unitFake) {
				require.Equal(t, []time.Time{alt1, alt2}, st.Alternatives)
				require.Empty(t, st.HoldID)
				rel := f.Input("appointment", "release-hold").(activities.ReleaseHoldInput)
				require.Equal(t, activities.ReleaseHoldInput{Tenant: "demo", Reference: unitWorkflowID}, rel, "release by reference only")
				offer := f.Input("appointment", "send-alternatives").(activities.ConfirmationInput)
				require.Equal(t, "alternatives", offer.Kind)
				require.Equal(t, unitWorkflowID, offer.Reference)
				for _, alt := range []time.Time{alt1, alt2} {
					require.Contains(t, offer.Text, alt.UTC().Format("02.01.2006 15:04"), "the reply names every free slot")
				}
				require.Equal(t, []string{"hold slot: failed", "release hold: compensated", "offer alternatives: ok"}, unitStepNames(st))
				require.Equal(t, f.Key("appointment", "hold-slot"), st.Steps[0].Key, "a failed step shows the key it sent")
			},
		},
		{
			name: "hold: calendar rejects",
			inject: func(f *unitFake) {
				f.holdSlot = func(context.Context, activities.HoldSlotInput) (activities.HoldSlotResult, error) {
					return activities.HoldSlotResult{}, unitFinalErr(activities.ErrTypeCalendarFinal, "outside_opening_hours")
				}
			},
			status: workflows.StatusRejected, reason: "downstream said no: CalendarRejected",
			appointment: []string{"HoldSlot hold-slot", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			payments:    []string{},
			check: func(t *testing.T, st appointment.State, _ *unitFake) {
				require.Empty(t, st.Alternatives)
			},
		},
		{
			name: "authorize: card declined",
			inject: func(f *unitFake) {
				f.Authorize = func(context.Context, activities.DepositInput) (activities.IntentResult, error) {
					return activities.IntentResult{}, unitFinalErr(activities.ErrTypePaymentDeclined, "pi_declined")
				}
			},
			status: workflows.StatusPaymentFailed, reason: "card_declined", payment: deposit.Declined,
			// void deposit (registered second) before release hold (first).
			appointment: []string{"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			payments:    []string{},
			check: func(t *testing.T, st appointment.State, f *unitFake) {
				require.Len(t, st.Steps, 5)
				require.Equal(t, "authorize deposit", st.Steps[1].Name)
				require.Equal(t, "failed", st.Steps[1].Result)
				require.Equal(t, []string{"void deposit: compensated", "release hold: compensated", "send not_booked: ok"}, unitStepNames(st)[2:])
				require.Equal(t, activities.IntentInput{Tenant: "demo", Reference: unitWorkflowID}, f.Input("appointment", "void-deposit"), "the appointment voids by reference")
				require.Equal(t, activities.ReleaseHoldInput{Tenant: "demo", Reference: unitWorkflowID}, f.Input("appointment", "release-hold"))
			},
		},
		{
			name: "confirm: calendar rejects",
			inject: func(f *unitFake) {
				f.confirmHold = func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
					return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeCalendarFinal, "hold_not_found")
				}
			},
			// (payment not checked: the appointment keeps the last report,
			// Authorized, although the deposit was voided; see the report.)
			status: workflows.StatusRejected, reason: "downstream said no: CalendarRejected",
			// Cancel booking is registered before the confirmation (its answer
			// may be lost), so it runs, by reference, and finds nothing.
			appointment: []string{"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "CancelBooking cancel-booking", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			payments:    []string{},
			check: func(t *testing.T, st appointment.State, f *unitFake) {
				require.Empty(t, f.Input("appointment", "cancel-booking").(activities.CancelBookingInput).BookingID, "no booking ID known: cancel by reference")
				require.Equal(t, []string{"hold slot: ok", "authorize deposit: ok", "confirm hold: failed", "cancel booking: compensated", "void deposit: compensated", "release hold: compensated", "send not_booked: ok"}, unitStepNames(st))
				require.Equal(t, "pi_1", f.Input("appointment", "void-deposit").(activities.IntentInput).IntentID, "the appointment voids the intent it authorised")
			},
		},
		{
			name: "capture: payment API rejects",
			inject: func(f *unitFake) {
				f.Capture = func(context.Context, activities.IntentInput) (activities.IntentResult, error) {
					return activities.IntentResult{}, unitFinalErr(activities.ErrTypePaymentFinal, "intent_expired")
				}
			},
			status: workflows.StatusPaymentFailed, reason: "deposit not captured: ", payment: deposit.Failed,
			// All three compensations, in reverse order of registration.
			appointment: []string{"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "CaptureDeposit capture-deposit", "CancelBooking cancel-booking", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"},
			payments:    []string{},
			check: func(t *testing.T, st appointment.State, f *unitFake) {
				require.Equal(t, activities.CancelBookingInput{Tenant: "demo", BookingID: "booking-hold-1", Reference: st.Reference}, f.Input("appointment", "cancel-booking"))
				require.Equal(t, []string{"hold slot: ok", "authorize deposit: ok", "confirm hold: ok", "capture deposit: failed",
					"cancel booking: compensated", "void deposit: compensated", "release hold: compensated", "send not_booked: ok"}, unitStepNames(st))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			tc.inject(f)
			env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Contains(t, st.Reason, tc.reason)
			require.NotContains(t, st.Reason, "compensation failed")
			if tc.payment != "" {
				require.Equal(t, tc.payment, st.Payment)
			}
			if !slices.Contains(tc.appointment, "AuthorizeDeposit authorize-deposit") {
				require.Empty(t, st.Payment, "no deposit was asked for")
			}
			require.Equal(t, tc.appointment, f.Sequence("appointment"))
			require.Equal(t, tc.payments, f.Sequence("payment"))
			require.False(t, f.Live(), "no live authorisation is left behind")
			for _, started := range f.Started("SendConfirmation") {
				require.NotEqual(t, "send-confirmation", started.ID, "no confirmation of a failed booking")
			}
			tc.check(t, st, f)
		})
	}
}

// TestUnitConfirmationFailureKeepsBooking: the confirmation is sent after
// the commit; its failure is visible in the step table and undoes nothing.
func TestUnitConfirmationFailureKeepsBooking(t *testing.T) {
	env, f := newUnitEnv(t)
	f.confirmation = func(context.Context, activities.ConfirmationInput) (activities.Step, error) {
		return activities.Step{}, unitFinalErr("OutboxRejected")
	}
	env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status)
	require.Equal(t, "send confirmation: failed", unitStepNames(st)[len(st.Steps)-1])
	require.Empty(t, st.MessageID)
	for _, name := range []string{"ReleaseHold", "VoidDeposit", "CancelBooking"} {
		require.Empty(t, f.Started(name))
	}
}

// TestUnitCancellationWhileAuthorising cancels the appointment while the
// payment saga's authorisation is in flight: the appointment ends
// Cancelled and its compensations (void deposit, then release hold) still
// run, in a disconnected context.
func TestUnitCancellationWhileAuthorising(t *testing.T) {
	cases := []struct {
		name   string
		cancel func(env *testsuite.TestWorkflowEnvironment)
	}{
		{"workflow cancellation", func(env *testsuite.TestWorkflowEnvironment) { env.CancelWorkflow() }},
		{"cancel signal", func(env *testsuite.TestWorkflowEnvironment) { env.SignalWorkflow(workflows.SignalCancel, nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			f.delays["AuthorizeDeposit"] = 10 * time.Second // the answer comes late
			var during appointment.State
			var qerr error
			env.RegisterDelayedCallback(func() {
				during, qerr = unitQuery(env)
				tc.cancel(env)
			}, 5*time.Second)
			env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
			require.NoError(t, qerr)
			require.Equal(t, workflows.StatusAuthorizing, during.Status, "cancelled while waiting for the authorisation")

			st := unitResult(t, env)
			require.Equal(t, workflows.StatusCancelled, st.Status)
			require.Equal(t, "cancelled", st.Reason)
			seq := f.Sequence("appointment")
			require.Equal(t, []string{"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"}, seq)
			// The void waited for the late authorisation's answer and
			// voided the intent it named, so nothing stays authorised.
			require.Equal(t, "pi_1", f.Input("appointment", "void-deposit").(activities.IntentInput).IntentID)
			require.False(t, f.Live(), "no live authorisation is left behind")
			require.Empty(t, f.Started("ConfirmHold"))
			require.Empty(t, f.Started("CaptureDeposit"))
			require.Empty(t, f.Started("SendConfirmation"))
			require.Equal(t, []string{"hold slot: ok", "authorize deposit: ok", "void deposit: compensated", "release hold: compensated"}, unitStepNames(st))
		})
	}
}

func TestUnitHoldExpiredOnConfirm(t *testing.T) {
	t.Run("re-hold once, then confirm-hold-2 succeeds", func(t *testing.T) {
		env, f := newUnitEnv(t)
		f.confirmHold = func(ctx context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			if in.HoldID == "hold-1" {
				return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeHoldExpired)
			}
			return activities.ConfirmHoldResult{Step: workflowtest.Step(ctx, "booking-"+in.HoldID), Booking: calendar.Booking{ID: "booking-" + in.HoldID, HoldID: in.HoldID}}, nil
		}
		env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Equal(t, "hold-2", st.HoldID)
		require.Equal(t, "booking-hold-2", st.BookingID)
		require.Equal(t, []string{
			"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold",
			"HoldSlot rehold-slot", "ConfirmHold confirm-hold-2",
			"CaptureDeposit capture-deposit", "SendConfirmation send-confirmation",
		}, f.Sequence(""))
		require.Equal(t, activities.ConfirmHoldInput{Tenant: "demo", HoldID: "hold-2"}, f.Input("appointment", "confirm-hold-2"))
		require.NotEqual(t, f.Key("appointment", "hold-slot"), f.Key("appointment", "rehold-slot"), "the re-hold is a new operation with its own key")
		require.Equal(t, []string{"hold slot: ok", "authorize deposit: ok", "confirm hold: failed", "hold slot: ok", "confirm hold: ok",
			"capture deposit: ok", "send confirmation: ok"}, unitStepNames(st))
		require.Empty(t, f.Started("ReleaseHold"))
	})
	t.Run("expired twice is rejected and compensated", func(t *testing.T) {
		env, f := newUnitEnv(t)
		f.confirmHold = func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeHoldExpired)
		}
		env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusRejected, st.Status)
		require.Equal(t, "hold_expired", st.Reason)
		require.Equal(t, []string{"HoldSlot hold-slot", "AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold", "HoldSlot rehold-slot", "ConfirmHold confirm-hold-2", "CancelBooking cancel-booking",
			"VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent", "SendConfirmation send-not-booked"}, f.Sequence("appointment"), "one re-hold only")
		require.False(t, f.Live())
	})
}

// TestUnitCancellationAfterCommitKeepsTheLifecycle: a Temporal
// cancellation of the appointment while the confirmation is sent (booked
// and paid) still hands the booking to its lifecycle, which the
// cancellation does not reach.
func TestUnitCancellationAfterCommitKeepsTheLifecycle(t *testing.T) {
	env, f := newUnitEnv(t)
	f.delays["SendConfirmation"] = 10 * time.Second
	env.RegisterDelayedCallback(env.CancelWorkflow, 5*time.Second)
	env.ExecuteWorkflow(appointment.WorkflowName, unitRequest())
	require.True(t, env.IsWorkflowCompleted())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotNil(t, f.lifecycle, "the lifecycle was started")
	require.Equal(t, "booking-hold-1", f.lifecycle.BookingID)
	for _, c := range f.Calls() {
		require.NotContains(t, []string{"CancelBooking", "VoidDeposit", "ReleaseHold"}, c.Activity, "a committed booking is not undone")
	}
}
