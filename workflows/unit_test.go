package workflows_test

// Unit tests of AppointmentWorkflow and PaymentWorkflow on the SDK's test
// environment: every activity is mocked (env.OnActivity) by a fake
// downstream, the payment saga runs for real as a child in the same
// environment, timers are skipped. Each path of the saga is driven by
// what the fake answers; the assertions are the final state, the status
// table and the exact order in which activities (compensations included)
// were started.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/review"
	"github.com/bookonce/bookonce/workflows"
)

// unitWorkflowID is the appointment's workflow ID (and business reference)
// in every unit test; the payment saga runs as payment:<it>.
var unitWorkflowID = workflows.AppointmentWorkflowID("demo", "unit0intent0000000000000")

var unitKeyPattern = regexp.MustCompile(`^bko1_[0-9a-f]{48}$`)

// unitCall is one started activity attempt, as the environment saw it.
type unitCall struct {
	Saga     string // "appointment" or "payment"
	Activity string
	ID       string
	At       time.Time
}

func (c unitCall) String() string {
	if c.Saga == "payment" {
		return "payment/" + c.Activity + " " + c.ID
	}
	return c.Activity + " " + c.ID
}

// unitFake is the downstream world of a unit test: a calendar, a payment
// API, an outbox and a review queue that answer from overridable functions
// (nil means the default: everything works) and remember what they saw.
type unitFake struct {
	mu     sync.Mutex
	calls  []unitCall
	keys   map[string]string // "<saga>/<activity ID>" -> key the activity sent
	inputs map[string]any    // "<saga>/<activity ID>" -> last input
	delays map[string]time.Duration
	holds  int
	// live is the deposit authorisation the fake payment API holds
	// (authorised and neither voided nor captured).
	live bool
	// child is the payment saga's result when it ran as a child.
	child    *workflows.PaymentState
	childErr error

	holdSlot     func(context.Context, activities.HoldSlotInput) (activities.HoldSlotResult, error)
	findHold     func(context.Context, activities.FindHoldInput) (activities.FindHoldResult, error)
	confirmHold  func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error)
	authorize    func(context.Context, activities.DepositInput) (activities.IntentResult, error)
	findDeposit  func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	capture      func(context.Context, activities.IntentInput) (activities.IntentResult, error)
	confirmation func(context.Context, activities.ConfirmationInput) (activities.Step, error)
	openReview   func(context.Context, activities.ReviewInput) (activities.Step, error)
	void         func(context.Context, activities.IntentInput) (activities.IntentResult, error)
}

func unitSagaOf(workflowID string) string {
	if strings.HasPrefix(workflowID, "payment:") {
		return "payment"
	}
	return "appointment"
}

// note records the key and input of an activity attempt.
func (f *unitFake) note(ctx context.Context, in any) {
	info := activity.GetInfo(ctx)
	k := unitSagaOf(info.WorkflowExecution.ID) + "/" + info.ActivityID
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[k] = activities.KeyOf(ctx)
	f.inputs[k] = in
}

func (f *unitFake) key(saga, activityID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys[saga+"/"+activityID]
}

func (f *unitFake) input(saga, activityID string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inputs[saga+"/"+activityID]
}

func (f *unitFake) delay(activityName string) func() time.Duration {
	return func() time.Duration {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.delays[activityName]
	}
}

// sequence lists the started activities of one saga ("" = both, the
// payment's prefixed with payment/), in start order.
func (f *unitFake) sequence(saga string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, c := range f.calls {
		switch {
		case saga == "":
			out = append(out, c.String())
		case c.Saga == saga:
			out = append(out, c.Activity+" "+c.ID)
		}
	}
	return out
}

func (f *unitFake) started(activityName string) []unitCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []unitCall
	for _, c := range f.calls {
		if c.Activity == activityName {
			out = append(out, c)
		}
	}
	return out
}

func unitStep(ctx context.Context, downstreamID string) activities.Step {
	return activities.Step{Key: activities.KeyOf(ctx), Attempt: activity.GetInfo(ctx).Attempt, DownstreamID: downstreamID}
}

// unitLog keeps the SDK's log in memory and prints it only when a test
// fails (the environment's goroutines may log after the test returned).
type unitLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *unitLog) write(level, msg string, kv []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, "%s %s %v\n", level, msg, kv)
}

func (l *unitLog) Debug(msg string, kv ...any) {}
func (l *unitLog) Info(msg string, kv ...any)  { l.write("INFO", msg, kv) }
func (l *unitLog) Warn(msg string, kv ...any)  { l.write("WARN", msg, kv) }
func (l *unitLog) Error(msg string, kv ...any) { l.write("ERROR", msg, kv) }

// newUnitEnv returns a test environment with both sagas and every activity
// registered, and every activity mocked by a fresh fake.
func newUnitEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	logs := &unitLog{}
	suite.SetLogger(logs)
	t.Cleanup(func() {
		if t.Failed() {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			t.Log("SDK log:\n" + logs.buf.String())
		}
	})
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.AppointmentWorkflow)
	env.RegisterWorkflow(workflows.PaymentWorkflow)
	env.RegisterActivity(&activities.Activities{})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: unitWorkflowID, TaskQueue: workflows.TaskQueue})

	f := &unitFake{keys: map[string]string{}, inputs: map[string]any{}, delays: map[string]time.Duration{}}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, unitCall{Saga: unitSagaOf(info.WorkflowExecution.ID), Activity: info.ActivityType.Name, ID: info.ActivityID, At: env.Now()})
	})

	// (GetWorkflowResultByID returns the root's result in SDK v1.50.0.)
	env.SetOnChildWorkflowCompletedListener(func(_ *workflow.Info, result converter.EncodedValue, err error) {
		var ps workflows.PaymentState
		if err == nil && result != nil {
			err = result.Get(&ps)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.child, f.childErr = &ps, err
	})

	a := (*activities.Activities)(nil)
	env.OnActivity(a.HoldSlot, mock.Anything, mock.Anything).AfterFn(f.delay("HoldSlot")).Return(
		func(ctx context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
			f.note(ctx, in)
			if f.holdSlot != nil {
				return f.holdSlot(ctx, in)
			}
			f.mu.Lock()
			f.holds++
			id := fmt.Sprintf("hold-%d", f.holds)
			f.mu.Unlock()
			return activities.HoldSlotResult{Step: unitStep(ctx, id), Hold: calendar.Hold{ID: id, Status: calendar.HoldHeld, Reference: in.Reference, Start: in.Start}}, nil
		})
	env.OnActivity(a.FindHold, mock.Anything, mock.Anything).AfterFn(f.delay("FindHold")).Return(
		func(ctx context.Context, in activities.FindHoldInput) (activities.FindHoldResult, error) {
			f.note(ctx, in)
			if f.findHold != nil {
				return f.findHold(ctx, in)
			}
			return activities.FindHoldResult{}, nil
		})
	env.OnActivity(a.ConfirmHold, mock.Anything, mock.Anything).AfterFn(f.delay("ConfirmHold")).Return(
		func(ctx context.Context, in activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			f.note(ctx, in)
			if f.confirmHold != nil {
				return f.confirmHold(ctx, in)
			}
			id := "booking-" + in.HoldID
			return activities.ConfirmHoldResult{Step: unitStep(ctx, id), Booking: calendar.Booking{ID: id, HoldID: in.HoldID}}, nil
		})
	env.OnActivity(a.ReleaseHold, mock.Anything, mock.Anything).AfterFn(f.delay("ReleaseHold")).Return(
		func(ctx context.Context, in activities.ReleaseHoldInput) (activities.Step, error) {
			f.note(ctx, in)
			return unitStep(ctx, "released"), nil
		})
	env.OnActivity(a.CancelBooking, mock.Anything, mock.Anything).AfterFn(f.delay("CancelBooking")).Return(
		func(ctx context.Context, in activities.CancelBookingInput) (activities.Step, error) {
			f.note(ctx, in)
			return unitStep(ctx, in.BookingID), nil
		})
	env.OnActivity(a.AuthorizeDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("AuthorizeDeposit")).Return(
		func(ctx context.Context, in activities.DepositInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.authorize != nil {
				return f.authorize(ctx, in)
			}
			f.mu.Lock()
			f.live = true
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, "pi_1"), Found: true,
				Intent: payments.Intent{ID: "pi_1", Status: payments.StatusRequiresCapture, Amount: in.Amount, Currency: in.Currency, Reference: in.Reference}}, nil
		})
	env.OnActivity(a.FindDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("FindDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.findDeposit != nil {
				return f.findDeposit(ctx, in)
			}
			return activities.IntentResult{Authoritative: true}, nil // our payment API: "not found" proves absence
		})
	env.OnActivity(a.CaptureDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("CaptureDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.capture != nil {
				return f.capture(ctx, in)
			}
			f.mu.Lock()
			f.live = false
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, in.IntentID), Found: true, Intent: payments.Intent{ID: in.IntentID, Status: "succeeded"}}, nil
		})
	env.OnActivity(a.VoidDeposit, mock.Anything, mock.Anything).AfterFn(f.delay("VoidDeposit")).Return(
		func(ctx context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			f.note(ctx, in)
			if f.void != nil {
				if res, err := f.void(ctx, in); err != nil {
					return res, err
				}
			}
			f.mu.Lock()
			f.live = false
			f.mu.Unlock()
			return activities.IntentResult{Step: unitStep(ctx, "pi_1"), Found: true, Intent: payments.Intent{ID: "pi_1", Status: "canceled"}}, nil
		})
	env.OnActivity(a.SendConfirmation, mock.Anything, mock.Anything).AfterFn(f.delay("SendConfirmation")).Return(
		func(ctx context.Context, in activities.ConfirmationInput) (activities.Step, error) {
			f.note(ctx, in)
			if f.confirmation != nil {
				return f.confirmation(ctx, in)
			}
			return unitStep(ctx, "msg_1"), nil
		})
	env.OnActivity(a.OpenReviewCase, mock.Anything, mock.Anything).AfterFn(f.delay("OpenReviewCase")).Return(
		func(ctx context.Context, in activities.ReviewInput) (activities.Step, error) {
			f.note(ctx, in)
			if f.openReview != nil {
				return f.openReview(ctx, in)
			}
			// The review store answers a repeated key with the case it
			// opened first: the case ID is a function of the key.
			key := activities.KeyOf(ctx)
			return activities.Step{Key: key, Attempt: 1, DownstreamID: "rc_" + key[len(key)-8:]}, nil
		})
	return env, f
}

func unitRequest() workflows.BookingRequest {
	return workflows.BookingRequest{
		Tenant: "demo", Customer: "+4915112345678", Service: "tire-change",
		SlotStart: time.Date(2030, 3, 5, 13, 0, 0, 0, time.UTC), Channel: workflows.ChannelAPI,
		DepositAmount: 2000, Currency: "eur", PaymentMethod: "pm_card_visa",
	}
}

// unitResult runs to completion and returns the appointment's final state.
func unitResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.BookingState {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st workflows.BookingState
	require.NoError(t, env.GetWorkflowResult(&st))
	return st
}

func unitQuery(env *testsuite.TestWorkflowEnvironment) (workflows.BookingState, error) {
	v, err := env.QueryWorkflow(workflows.QueryStatus)
	if err != nil {
		return workflows.BookingState{}, err
	}
	var st workflows.BookingState
	return st, v.Get(&st)
}

func unitStepNames(st workflows.BookingState) []string {
	out := []string{}
	for _, s := range st.Steps {
		out = append(out, s.Name+": "+s.Result)
	}
	return out
}

func unitFinalErr(errType string, details ...any) error {
	return temporal.NewNonRetryableApplicationError("downstream said no: "+errType, errType, nil, details...)
}

func TestUnitHappyPath(t *testing.T) {
	env, f := newUnitEnv(t)
	env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, unitWorkflowID, st.Reference)
	require.Equal(t, "hold-1", st.HoldID)
	require.Equal(t, "booking-hold-1", st.BookingID)
	require.Equal(t, workflows.PaymentCaptured, st.Payment)
	require.Equal(t, "pi_1", st.IntentID)
	require.Equal(t, "msg_1", st.MessageID)
	require.Empty(t, st.Reason)

	require.Equal(t, []string{
		"hold slot: ok", "authorize deposit (payment saga): ok", "confirm hold: ok",
		"capture deposit (payment saga): ok", "send confirmation: ok",
	}, unitStepNames(st))
	// Each step carries the key its activity sent downstream, derived from
	// the execution: all well-formed, all different.
	sent := map[string]string{
		"hold slot":                        f.key("appointment", "hold-slot"),
		"authorize deposit (payment saga)": f.key("payment", "authorize-deposit"),
		"confirm hold":                     f.key("appointment", "confirm-hold"),
		"capture deposit (payment saga)":   f.key("payment", "capture-deposit"),
		"send confirmation":                f.key("appointment", "send-confirmation"),
	}
	seen := map[string]bool{}
	for _, s := range st.Steps {
		require.Regexp(t, unitKeyPattern, s.Key, s.Name)
		require.Equal(t, sent[s.Name], s.Key, "%s: the recorded key is the one sent", s.Name)
		require.Equal(t, int32(1), s.Attempt, s.Name)
		require.NotEmpty(t, s.DownstreamID, s.Name)
		require.False(t, seen[s.Key], "%s: every step has its own key", s.Name)
		seen[s.Key] = true
	}

	// Exactly the forward steps, in order; no compensation ran.
	require.Equal(t, []string{
		"HoldSlot hold-slot", "payment/AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold",
		"payment/CaptureDeposit capture-deposit", "SendConfirmation send-confirmation",
	}, f.sequence(""))
	for _, name := range []string{"ReleaseHold", "VoidDeposit", "CancelBooking", "FindHold", "OpenReviewCase"} {
		require.Empty(t, f.started(name), "%s must not run on the happy path", name)
	}

	// The business reference travels downstream with the hold and the deposit.
	require.Equal(t, unitWorkflowID, f.input("appointment", "hold-slot").(activities.HoldSlotInput).Reference)
	dep := f.input("payment", "authorize-deposit").(activities.DepositInput)
	require.Equal(t, unitWorkflowID, dep.Reference)
	require.Equal(t, int64(2000), dep.Amount)
	require.Equal(t, "pi_1", f.input("payment", "capture-deposit").(activities.IntentInput).IntentID)
	require.False(t, f.live)

	// The payment saga is a child under its derived ID and ended captured.
	require.NoError(t, f.childErr)
	require.NotNil(t, f.child)
	require.Equal(t, workflows.PaymentCaptured, f.child.Status)
}

func TestUnitNoDepositSkipsPaymentSaga(t *testing.T) {
	env, f := newUnitEnv(t)
	req := unitRequest()
	req.DepositAmount = 0
	env.ExecuteWorkflow(workflows.AppointmentWorkflow, req)
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "SendConfirmation send-confirmation"}, f.sequence(""))
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
		reason      string                  // contained
		payment     workflows.PaymentStatus // "" = not checked
		appointment []string                // started activities of the appointment saga
		payments    []string                // started activities of the payment saga
		check       func(t *testing.T, st workflows.BookingState, f *unitFake)
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
			check: func(t *testing.T, st workflows.BookingState, f *unitFake) {
				require.Equal(t, []time.Time{alt1, alt2}, st.Alternatives)
				require.Empty(t, st.HoldID)
				rel := f.input("appointment", "release-hold").(activities.ReleaseHoldInput)
				require.Equal(t, activities.ReleaseHoldInput{Tenant: "demo", Reference: unitWorkflowID}, rel, "release by reference only")
				offer := f.input("appointment", "send-alternatives").(activities.ConfirmationInput)
				require.Equal(t, "alternatives", offer.Kind)
				require.Equal(t, unitWorkflowID, offer.Reference)
				for _, alt := range []time.Time{alt1, alt2} {
					require.Contains(t, offer.Text, alt.UTC().Format("02.01.2006 15:04"), "the reply names every free slot")
				}
				require.Equal(t, []string{"hold slot: failed", "release hold: compensated", "offer alternatives: ok"}, unitStepNames(st))
				require.Equal(t, f.key("appointment", "hold-slot"), st.Steps[0].Key, "a failed step shows the key it sent")
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
			appointment: []string{"HoldSlot hold-slot", "ReleaseHold release-hold", "CloseIntent close-intent"},
			payments:    []string{},
			check: func(t *testing.T, st workflows.BookingState, _ *unitFake) {
				require.Empty(t, st.Alternatives)
			},
		},
		{
			name: "authorize: card declined",
			inject: func(f *unitFake) {
				f.authorize = func(context.Context, activities.DepositInput) (activities.IntentResult, error) {
					return activities.IntentResult{}, unitFinalErr(activities.ErrTypePaymentDeclined, "pi_declined")
				}
			},
			status: workflows.StatusPaymentFailed, reason: "card_declined", payment: workflows.PaymentDeclined,
			// void deposit (registered second) before release hold (first).
			appointment: []string{"HoldSlot hold-slot", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"},
			payments:    []string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"},
			check: func(t *testing.T, st workflows.BookingState, f *unitFake) {
				require.Len(t, st.Steps, 4)
				require.Equal(t, "authorize deposit (payment saga)", st.Steps[1].Name)
				require.Equal(t, []string{"void deposit: compensated", "release hold: compensated"}, unitStepNames(st)[2:])
				require.NoError(t, f.childErr)
				require.Equal(t, workflows.PaymentDeclined, f.child.Status)
				require.Equal(t, activities.IntentInput{Tenant: "demo", Reference: unitWorkflowID}, f.input("appointment", "void-deposit"), "the appointment voids by reference")
				require.Equal(t, activities.ReleaseHoldInput{Tenant: "demo", Reference: unitWorkflowID}, f.input("appointment", "release-hold"))
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
			appointment: []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "CancelBooking cancel-booking", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"},
			// The appointment's void signal makes the payment saga void too.
			payments: []string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"},
			check: func(t *testing.T, st workflows.BookingState, f *unitFake) {
				require.Empty(t, f.input("appointment", "cancel-booking").(activities.CancelBookingInput).BookingID, "no booking ID known: cancel by reference")
				require.Equal(t, []string{"hold slot: ok", "authorize deposit (payment saga): ok", "confirm hold: failed", "cancel booking: compensated", "void deposit: compensated", "release hold: compensated"}, unitStepNames(st))
				require.Equal(t, "pi_1", f.input("payment", "void-deposit").(activities.IntentInput).IntentID, "the payment saga voids its own intent")
			},
		},
		{
			name: "capture: payment API rejects",
			inject: func(f *unitFake) {
				f.capture = func(context.Context, activities.IntentInput) (activities.IntentResult, error) {
					return activities.IntentResult{}, unitFinalErr(activities.ErrTypePaymentFinal, "intent_expired")
				}
			},
			status: workflows.StatusPaymentFailed, reason: "deposit not captured: capture: ", payment: workflows.PaymentFailed,
			// All three compensations, in reverse order of registration.
			appointment: []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "CancelBooking cancel-booking", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"},
			payments:    []string{"AuthorizeDeposit authorize-deposit", "CaptureDeposit capture-deposit", "VoidDeposit void-deposit"},
			check: func(t *testing.T, st workflows.BookingState, f *unitFake) {
				require.Equal(t, activities.CancelBookingInput{Tenant: "demo", BookingID: "booking-hold-1", Reference: st.Reference}, f.input("appointment", "cancel-booking"))
				require.Equal(t, []string{"hold slot: ok", "authorize deposit (payment saga): ok", "confirm hold: ok",
					"cancel booking: compensated", "void deposit: compensated", "release hold: compensated"}, unitStepNames(st))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			tc.inject(f)
			env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Contains(t, st.Reason, tc.reason)
			require.NotContains(t, st.Reason, "compensation failed")
			if tc.payment != "" {
				require.Equal(t, tc.payment, st.Payment)
			}
			if len(tc.payments) == 0 {
				require.Empty(t, st.Payment, "no payment saga ran")
			}
			require.Equal(t, tc.appointment, f.sequence("appointment"))
			require.Equal(t, tc.payments, f.sequence("payment"))
			require.False(t, f.live, "no live authorisation is left behind")
			for _, started := range f.started("SendConfirmation") {
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
	env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
	st := unitResult(t, env)
	require.Equal(t, workflows.StatusConfirmed, st.Status)
	require.Equal(t, "send confirmation: failed", unitStepNames(st)[len(st.Steps)-1])
	require.Empty(t, st.MessageID)
	for _, name := range []string{"ReleaseHold", "VoidDeposit", "CancelBooking"} {
		require.Empty(t, f.started(name))
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
			var during workflows.BookingState
			var qerr error
			env.RegisterDelayedCallback(func() {
				during, qerr = unitQuery(env)
				tc.cancel(env)
			}, 5*time.Second)
			env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
			require.NoError(t, qerr)
			require.Equal(t, workflows.StatusAuthorizing, during.Status, "cancelled while waiting for the authorisation")

			st := unitResult(t, env)
			require.Equal(t, workflows.StatusCancelled, st.Status)
			require.Equal(t, "cancelled", st.Reason)
			seq := f.sequence("appointment")
			require.Equal(t, []string{"HoldSlot hold-slot", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"}, seq)
			// The payment saga voided its side before the appointment voided
			// by reference: the appointment waits for it to finish.
			require.NoError(t, f.childErr, "the payment saga finished, it was not terminated")
			require.Contains(t, []workflows.PaymentStatus{workflows.PaymentVoided, workflows.PaymentFailed}, f.child.Status)
			require.Equal(t, []string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"}, f.sequence("payment"))
			var childVoid, parentVoid time.Time
			for _, c := range f.started("VoidDeposit") {
				if c.Saga == "payment" {
					childVoid = c.At
				} else {
					parentVoid = c.At
				}
			}
			require.False(t, parentVoid.Before(childVoid))
			require.False(t, f.live, "no live authorisation is left behind")
			require.Empty(t, f.started("ConfirmHold"))
			require.Empty(t, f.started("CaptureDeposit"))
			require.Empty(t, f.started("SendConfirmation"))
			require.Equal(t, []string{"hold slot: ok", "void deposit: compensated", "release hold: compensated"}, unitStepNames(st))
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
			return activities.ConfirmHoldResult{Step: unitStep(ctx, "booking-"+in.HoldID), Booking: calendar.Booking{ID: "booking-" + in.HoldID, HoldID: in.HoldID}}, nil
		}
		env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Equal(t, "hold-2", st.HoldID)
		require.Equal(t, "booking-hold-2", st.BookingID)
		require.Equal(t, []string{
			"HoldSlot hold-slot", "payment/AuthorizeDeposit authorize-deposit", "ConfirmHold confirm-hold",
			"HoldSlot rehold-slot", "ConfirmHold confirm-hold-2",
			"payment/CaptureDeposit capture-deposit", "SendConfirmation send-confirmation",
		}, f.sequence(""))
		require.Equal(t, activities.ConfirmHoldInput{Tenant: "demo", HoldID: "hold-2"}, f.input("appointment", "confirm-hold-2"))
		require.NotEqual(t, f.key("appointment", "hold-slot"), f.key("appointment", "rehold-slot"), "the re-hold is a new operation with its own key")
		require.Equal(t, []string{"hold slot: ok", "authorize deposit (payment saga): ok", "confirm hold: failed", "hold slot: ok", "confirm hold: ok",
			"capture deposit (payment saga): ok", "send confirmation: ok"}, unitStepNames(st))
		require.Empty(t, f.started("ReleaseHold"))
	})
	t.Run("expired twice is rejected and compensated", func(t *testing.T) {
		env, f := newUnitEnv(t)
		f.confirmHold = func(context.Context, activities.ConfirmHoldInput) (activities.ConfirmHoldResult, error) {
			return activities.ConfirmHoldResult{}, unitFinalErr(activities.ErrTypeHoldExpired)
		}
		env.ExecuteWorkflow(workflows.AppointmentWorkflow, unitRequest())
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusRejected, st.Status)
		require.Equal(t, "hold_expired", st.Reason)
		require.Equal(t, []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "HoldSlot rehold-slot", "ConfirmHold confirm-hold-2", "CancelBooking cancel-booking",
			"VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"}, f.sequence("appointment"), "one re-hold only")
		require.False(t, f.live)
	})
}

// unitUnknownHold makes every hold attempt end with a retryable error (an
// unknown outcome) until ok returns true for the activity ID.
func unitUnknownHold(f *unitFake, ok func(activityID string) bool) {
	f.holdSlot = func(ctx context.Context, in activities.HoldSlotInput) (activities.HoldSlotResult, error) {
		id := activity.GetInfo(ctx).ActivityID
		if ok != nil && ok(id) {
			return activities.HoldSlotResult{Step: unitStep(ctx, "hold-"+id), Hold: calendar.Hold{ID: "hold-" + id, Status: calendar.HoldHeld, Reference: in.Reference}}, nil
		}
		return activities.HoldSlotResult{}, errors.New("timeout")
	}
	// The first lookup answers "nothing there", the second cannot answer.
	f.findHold = func(ctx context.Context, _ activities.FindHoldInput) (activities.FindHoldResult, error) {
		if activity.GetInfo(ctx).ActivityID == "find-hold-slot" {
			return activities.FindHoldResult{}, nil
		}
		return activities.FindHoldResult{}, errors.New("calendar unreachable")
	}
}

var unitUnknownTuning = workflows.Tuning{ActivityAttempts: 1, ReviewTimeout: 6 * time.Hour}

// unitUnknownUntilReview is the activity sequence of a hold whose outcome stays
// unknown: reconciled (nothing found), tried once more, reconciliation
// fails, a review case is opened.
var unitUnknownUntilReview = []string{
	"HoldSlot hold-slot", "FindHold find-hold-slot", "HoldSlot hold-slot-2", "FindHold find-hold-slot-2",
	"OpenReviewCase open-review-hold-slot-2",
}

func TestUnitUnknownHoldOutcome(t *testing.T) {
	t.Run("reconciled: the lost hold is found and used", func(t *testing.T) {
		env, f := newUnitEnv(t)
		unitUnknownHold(f, nil)
		f.findHold = func(_ context.Context, in activities.FindHoldInput) (activities.FindHoldResult, error) {
			return activities.FindHoldResult{Found: true, Hold: calendar.Hold{ID: "hold-lost", Status: calendar.HoldHeld, Reference: in.Reference}}, nil
		}
		req := unitRequest()
		req.Tuning = unitUnknownTuning
		env.ExecuteWorkflow(workflows.AppointmentWorkflow, req)
		st := unitResult(t, env)
		require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
		require.Equal(t, "hold-lost", st.HoldID)
		require.Equal(t, []string{"HoldSlot hold-slot", "FindHold find-hold-slot", "ConfirmHold confirm-hold", "SendConfirmation send-confirmation"}, f.sequence("appointment"))
		require.Equal(t, activities.FindHoldInput{Tenant: "demo", Reference: unitWorkflowID}, f.input("appointment", "find-hold-slot"))
	})

	cases := []struct {
		name string
		// decide runs while the saga waits for review; nil sends nothing.
		decide   func(env *testsuite.TestWorkflowEnvironment, caseID string)
		holdOK   func(activityID string) bool
		status   workflows.BookingStatus
		reason   string
		after    []string // appointment activities after the review case opened
		minWait  time.Duration
		maxWait  time.Duration
		wantHold string
	}{
		{
			name: "abandon decision",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionAbandon})
			},
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent"},
			minWait: time.Hour, maxWait: 2 * time.Hour,
		},
		{
			name: "a decision for another case is ignored, then abandon",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: "rc_someotherone", Action: review.ActionRetry})
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionAbandon})
			},
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent"},
			minWait: time.Hour, maxWait: 2 * time.Hour,
		},
		{
			name:   "review timeout abandons",
			decide: nil,
			status: workflows.StatusRejected, reason: "hold outcome unknown; review decided abandon",
			after:   []string{"ReleaseHold release-hold", "CloseIntent close-intent"},
			minWait: unitUnknownTuning.ReviewTimeout, maxWait: unitUnknownTuning.ReviewTimeout + time.Minute,
		},
		{
			name: "retry decision holds again and books",
			decide: func(env *testsuite.TestWorkflowEnvironment, caseID string) {
				env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{CaseID: caseID, Action: review.ActionRetry})
			},
			holdOK:  func(id string) bool { return id == "hold-slot-3" },
			status:  workflows.StatusConfirmed,
			after:   []string{"HoldSlot hold-slot-3", "ConfirmHold confirm-hold", "SendConfirmation send-confirmation"},
			minWait: time.Hour, maxWait: 2 * time.Hour, wantHold: "hold-hold-slot-3",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			unitUnknownHold(f, tc.holdOK)
			req := unitRequest()
			req.Tuning = unitUnknownTuning
			start := env.Now()
			var during workflows.BookingState
			var qerr error
			env.RegisterDelayedCallback(func() {
				during, qerr = unitQuery(env)
				if tc.decide != nil && qerr == nil {
					tc.decide(env, during.ReviewCase)
				}
			}, time.Hour)
			env.ExecuteWorkflow(workflows.AppointmentWorkflow, req)

			require.NoError(t, qerr)
			require.Equal(t, workflows.StatusNeedsReview, during.Status, "waiting for a person")
			require.NotEmpty(t, during.ReviewCase)
			require.Equal(t, []string{"hold slot: failed", "hold slot: failed"}, unitStepNames(during))
			rin := f.input("appointment", "open-review-hold-slot-2").(activities.ReviewInput)
			require.Equal(t, review.ReasonUnknownOutcome, rin.Reason)
			require.Equal(t, unitWorkflowID, rin.WorkflowID)
			require.Equal(t, "hold-slot-2", rin.Details["step"])

			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Equal(t, tc.reason, st.Reason)
			require.Empty(t, st.ReviewCase, "the case is closed for the saga")
			require.Equal(t, append(append([]string{}, unitUnknownUntilReview...), tc.after...), f.sequence("appointment"))
			ended := f.calls[len(f.calls)-1].At.Sub(start)
			require.GreaterOrEqual(t, ended, tc.minWait)
			require.Less(t, ended, tc.maxWait)
			if tc.wantHold != "" {
				require.Equal(t, tc.wantHold, st.HoldID)
			} else {
				require.Empty(t, f.started("AuthorizeDeposit"), "no deposit without a hold")
			}
		})
	}
}

func unitPaymentRequest() workflows.PaymentRequest {
	return workflows.PaymentRequest{
		Tenant: "demo", Reference: unitWorkflowID, Customer: "+4915112345678", Amount: 2000, Currency: "eur",
		PaymentMethod: "pm_card_visa", Description: "Deposit tire-change", DecisionTimeout: 30 * time.Minute,
	}
}

func newUnitPaymentEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *unitFake) {
	env, f := newUnitEnv(t)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.PaymentWorkflowID(unitWorkflowID), TaskQueue: workflows.TaskQueue})
	return env, f
}

func unitPaymentResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.PaymentState {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var ps workflows.PaymentState
	require.NoError(t, env.GetWorkflowResult(&ps))
	return ps
}

// TestUnitPaymentDecisions runs PaymentWorkflow alone (no parent to
// notify) and drives it with decisions, or with none.
func TestUnitPaymentDecisions(t *testing.T) {
	cases := []struct {
		name     string
		decision workflows.PaymentAction // "" = no decision
		status   workflows.PaymentStatus
		reason   string
		calls    []string
		minAt    time.Duration // when the last activity started
	}{
		{"no decision: voided by timer", "", workflows.PaymentVoided, "no decision in time",
			[]string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"}, 30 * time.Minute},
		{"capture", workflows.PaymentCapture, workflows.PaymentCaptured, "",
			[]string{"AuthorizeDeposit authorize-deposit", "CaptureDeposit capture-deposit"}, time.Minute},
		{"void", workflows.PaymentVoid, workflows.PaymentVoided, "voided by the appointment",
			[]string{"AuthorizeDeposit authorize-deposit", "VoidDeposit void-deposit"}, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitPaymentEnv(t)
			start := env.Now()
			var during workflows.PaymentState
			env.RegisterDelayedCallback(func() {
				if v, err := env.QueryWorkflow(workflows.QueryStatus); err == nil {
					_ = v.Get(&during)
				}
				if tc.decision != "" {
					env.SignalWorkflow(workflows.SignalPaymentDecision, tc.decision)
				}
			}, time.Minute)
			env.ExecuteWorkflow(workflows.PaymentWorkflow, unitPaymentRequest())
			ps := unitPaymentResult(t, env)
			require.Equal(t, workflows.PaymentAuthorized, during.Status, "authorised and waiting")
			require.Equal(t, tc.status, ps.Status)
			require.Equal(t, tc.reason, ps.Reason)
			require.Equal(t, "pi_1", ps.IntentID)
			require.Equal(t, tc.calls, f.sequence("payment"))
			last := f.calls[len(f.calls)-1]
			require.GreaterOrEqual(t, last.At.Sub(start), tc.minAt)
			if tc.decision == "" {
				require.Less(t, last.At.Sub(start), 31*time.Minute, "voided right at the decision timeout")
				require.Equal(t, "pi_1", f.input("payment", "void-deposit").(activities.IntentInput).IntentID)
			}
			require.False(t, f.live, "no live authorisation is left behind")
			for _, s := range ps.Steps {
				require.Regexp(t, unitKeyPattern, s.Key, s.Name)
			}
		})
	}
}

func TestUnitPaymentUnknownAuthorisation(t *testing.T) {
	unknown := func(f *unitFake) {
		f.authorize = func(context.Context, activities.DepositInput) (activities.IntentResult, error) {
			return activities.IntentResult{}, errors.New("timeout")
		}
	}
	t.Run("reconciled by reference", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.findDeposit = func(_ context.Context, in activities.IntentInput) (activities.IntentResult, error) {
			return activities.IntentResult{Found: true, Intent: payments.Intent{ID: "pi_lost", Status: payments.StatusRequiresCapture, Reference: in.Reference}}, nil
		}
		req := unitPaymentRequest()
		req.Tuning = workflows.Tuning{ActivityAttempts: 1}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalPaymentDecision, workflows.PaymentCapture) }, time.Minute)
		env.ExecuteWorkflow(workflows.PaymentWorkflow, req)
		ps := unitPaymentResult(t, env)
		require.Equal(t, workflows.PaymentCaptured, ps.Status)
		require.Equal(t, "pi_lost", ps.IntentID)
		require.Equal(t, []string{"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "CaptureDeposit capture-deposit"}, f.sequence("payment"))
		require.Equal(t, "pi_lost", f.input("payment", "capture-deposit").(activities.IntentInput).IntentID)
	})
	t.Run("still unknown: review, abandon, void", func(t *testing.T) {
		env, f := newUnitPaymentEnv(t)
		unknown(f)
		f.findDeposit = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
			if activity.GetInfo(ctx).ActivityID == "find-deposit-1" {
				return activities.IntentResult{Authoritative: true}, nil
			}
			return activities.IntentResult{}, errors.New("payments unreachable")
		}
		req := unitPaymentRequest()
		req.Tuning = workflows.Tuning{ActivityAttempts: 1}
		var during workflows.PaymentState
		env.RegisterDelayedCallback(func() {
			if v, err := env.QueryWorkflow(workflows.QueryStatus); err == nil {
				_ = v.Get(&during)
			}
			env.SignalWorkflow(workflows.SignalReviewDecision, workflows.ReviewDecision{Action: review.ActionAbandon})
		}, time.Hour)
		env.ExecuteWorkflow(workflows.PaymentWorkflow, req)
		ps := unitPaymentResult(t, env)
		require.Equal(t, workflows.PaymentNeedsReview, during.Status)
		require.Equal(t, workflows.PaymentFailed, ps.Status)
		require.Contains(t, ps.Reason, "deposit outcome unknown, review: abandon")
		require.Equal(t, []string{
			"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "AuthorizeDeposit authorize-deposit-2",
			"FindDeposit find-deposit-2", "OpenReviewCase open-review-authorize-deposit-2", "VoidDeposit void-deposit",
		}, f.sequence("payment"))
		require.Equal(t, activities.IntentInput{Tenant: "demo", Reference: unitWorkflowID}, f.input("payment", "void-deposit"), "nothing known: void by reference")
	})
}

// TestUnitUnknownDepositOutcome: the payment saga cannot tell whether the
// authorisation happened; it opens a review case (pointing at itself) and
// reports NeedsReview, which the appointment shows; the reviewer's
// decision goes to the payment saga.
func TestUnitUnknownDepositOutcome(t *testing.T) {
	childID := workflows.PaymentWorkflowID(unitWorkflowID)
	untilReview := []string{
		"AuthorizeDeposit authorize-deposit", "FindDeposit find-deposit-1", "AuthorizeDeposit authorize-deposit-2",
		"FindDeposit find-deposit-2", "OpenReviewCase open-review-authorize-deposit-2",
	}
	cases := []struct {
		name        string
		action      review.Action
		status      workflows.BookingStatus
		reason      string
		appointment []string
		payment     []string
	}{
		{
			name: "retry", action: review.ActionRetry, status: workflows.StatusConfirmed,
			appointment: []string{"HoldSlot hold-slot", "ConfirmHold confirm-hold", "SendConfirmation send-confirmation"},
			payment:     []string{"AuthorizeDeposit authorize-deposit-3", "CaptureDeposit capture-deposit"},
		},
		{
			name: "abandon", action: review.ActionAbandon, status: workflows.StatusPaymentFailed,
			reason:      "deposit outcome unknown, review: abandon",
			appointment: []string{"HoldSlot hold-slot", "VoidDeposit void-deposit", "ReleaseHold release-hold", "CloseIntent close-intent"},
			payment:     []string{"VoidDeposit void-deposit"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitEnv(t)
			f.authorize = func(ctx context.Context, in activities.DepositInput) (activities.IntentResult, error) {
				if activity.GetInfo(ctx).ActivityID != "authorize-deposit-3" {
					return activities.IntentResult{}, errors.New("timeout")
				}
				f.mu.Lock()
				f.live = true
				f.mu.Unlock()
				return activities.IntentResult{Step: unitStep(ctx, "pi_3"), Found: true, Intent: payments.Intent{ID: "pi_3", Status: payments.StatusRequiresCapture, Reference: in.Reference}}, nil
			}
			f.findDeposit = func(ctx context.Context, _ activities.IntentInput) (activities.IntentResult, error) {
				if activity.GetInfo(ctx).ActivityID == "find-deposit-1" {
					return activities.IntentResult{Authoritative: true}, nil
				}
				return activities.IntentResult{}, errors.New("payments unreachable")
			}
			req := unitRequest()
			req.Tuning = workflows.Tuning{ActivityAttempts: 1}
			var appt workflows.BookingState
			var pay workflows.PaymentState
			var qerr, serr error
			env.RegisterDelayedCallback(func() {
				if appt, qerr = unitQuery(env); qerr != nil {
					return
				}
				var v converter.EncodedValue
				if v, qerr = env.QueryWorkflowByID(childID, workflows.QueryStatus); qerr != nil {
					return
				}
				if qerr = v.Get(&pay); qerr != nil {
					return
				}
				serr = env.SignalWorkflowByID(childID, workflows.SignalReviewDecision, workflows.ReviewDecision{Action: tc.action})
			}, 2*time.Minute)
			env.ExecuteWorkflow(workflows.AppointmentWorkflow, req)

			require.NoError(t, qerr)
			require.NoError(t, serr)
			require.Equal(t, workflows.StatusNeedsReview, appt.Status, "the appointment shows the deposit's review")
			require.Equal(t, workflows.PaymentNeedsReview, appt.Payment)
			require.Equal(t, workflows.PaymentNeedsReview, pay.Status)
			rin := f.input("payment", "open-review-authorize-deposit-2").(activities.ReviewInput)
			require.Equal(t, childID, rin.WorkflowID, "the case names the saga that waits for it")

			st := unitResult(t, env)
			require.Equal(t, tc.status, st.Status, st.Reason)
			require.Contains(t, st.Reason, tc.reason)
			require.Equal(t, tc.appointment, f.sequence("appointment"))
			require.Equal(t, append(append([]string{}, untilReview...), tc.payment...), f.sequence("payment"))
			require.False(t, f.live, "no live authorisation is left behind")
			if tc.action == review.ActionRetry {
				require.Equal(t, "pi_3", st.IntentID)
				require.Equal(t, f.key("payment", "authorize-deposit-3"), st.Steps[1].Key)
			}
		})
	}
}
