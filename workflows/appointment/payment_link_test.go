package appointment_test

// Unit tests of the payment-link mode (PaymentMethod empty) on the SDK's
// test environment: the appointment and its payment saga run for real,
// the payment link is the fake's (link_fake_test.go), timers are skipped.
// The signal is the gateway's relay of a webhook; the tests also leave it
// out, as a lost webhook would.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/deposit"
)

func unitLinkRequest() appointment.Request {
	req := unitRequest()
	req.PaymentMethod = "" // link mode
	req.Channel = workflows.ChannelVoice
	return req
}

// relay signals the payment saga as the gateway's webhook receiver does.
func relay(t *testing.T, env *testsuite.TestWorkflowEnvironment, typ string) {
	t.Helper()
	require.NoError(t, env.SignalWorkflowByID(deposit.WorkflowID(unitWorkflowID), deposit.SignalEvent,
		deposit.Event{EventID: "evt_" + typ, Type: typ, SessionID: "cs_1"}))
}

func (f *unitFake) messages() map[string]activities.ConfirmationInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]activities.ConfirmationInput{}
	for k, in := range f.Inputs() {
		if c, ok := in.(activities.ConfirmationInput); ok {
			out[k] = c
		}
	}
	return out
}

func TestUnitLinkPaidIsCaptured(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	start := env.Now()
	var waiting appointment.State
	env.RegisterDelayedCallback(func() {
		var err error
		waiting, err = unitQuery(env)
		require.NoError(t, err)
		f.pay()
		relay(t, env, deposit.EventCheckoutCompleted)
	}, 5*time.Minute)
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusAuthorizing, waiting.Status)
	require.Equal(t, deposit.AwaitingPayment, waiting.Payment)
	require.Equal(t, "https://pay.example/pay/cs_1", waiting.PaymentURL, "the status query shows the link")
	require.Equal(t, start.Add(32*time.Minute).UTC().Truncate(time.Second), waiting.PaymentExpiresAt.UTC())

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, deposit.Captured, st.Payment)
	require.Equal(t, "pi_link", st.IntentID)
	require.Equal(t, []string{
		"CreatePaymentLink create-payment-link", "SendConfirmation send-payment-link",
		"GetPaymentLink read-payment-link-1", "CaptureDeposit capture-deposit",
	}, f.Sequence("payment"))
	require.Equal(t, 37*time.Minute, f.Input("appointment", "hold-slot").(activities.HoldSlotInput).TTL, "the hold outlives the link")
	link := f.messages()["payment/send-payment-link"]
	require.Equal(t, activities.MessageKindPaymentLink, link.Kind)
	require.Equal(t, "whatsapp", link.Channel, "a caller gets the link by WhatsApp")
	require.Contains(t, link.Text, "Bitte zahlen Sie die Anzahlung von 20,00 € hier: https://pay.example/pay/cs_1 (gültig bis ")
	in := f.Input("payment", "create-payment-link").(activities.PaymentLinkInput)
	require.Equal(t, unitWorkflowID, in.Reference)
	require.Equal(t, "de", in.Locale)
	require.False(t, f.Live())
}

func TestUnitLinkLostWebhookReconciledAtDeadline(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	start := env.Now()
	env.RegisterDelayedCallback(f.pay, 10*time.Minute) // paid, but no webhook ever arrives
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, deposit.Captured, st.Payment)
	require.Equal(t, []string{
		"CreatePaymentLink create-payment-link", "SendConfirmation send-payment-link",
		"GetPaymentLink read-payment-link-1", "CaptureDeposit capture-deposit",
	}, f.Sequence("payment"), "read at the deadline, found paid: no expiry")
	read := f.Started("GetPaymentLink")[0]
	require.GreaterOrEqual(t, read.At.Sub(start), 31*time.Minute+59*time.Second, "read at the link's deadline (whole seconds)")
}

func TestUnitLinkExpiredReleasesHold(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusPaymentFailed, st.Status)
	require.Equal(t, "payment_link_expired", st.Reason)
	require.Equal(t, deposit.Expired, st.Payment)
	require.Equal(t, []string{
		"CreatePaymentLink create-payment-link", "SendConfirmation send-payment-link",
		"GetPaymentLink read-payment-link-1", "ExpirePaymentLink expire-payment-link",
	}, f.Sequence("payment"), "still open at the deadline: closed, then nothing to void")
	// The expired session, read by its ID, proves nothing was paid: no
	// search for a deposit, which a lagging one (Stripe's) could never
	// prove absent (the compensation retried for ever).
	require.Empty(t, f.Started("VoidDeposit"))
	require.Equal(t, payments.SessionExpired, f.link.session.Status)
	seq := f.Sequence("appointment")
	require.Less(t, slices.Index(seq, "ReleaseHold release-hold"), slices.Index(seq, "SendConfirmation send-payment-expired"),
		"told after the slot was released: %v", seq)
	msg := f.messages()["appointment/send-payment-expired"]
	require.Equal(t, activities.MessageKindPaymentExpired, msg.Kind)
	require.Contains(t, msg.Text, "Zahlungslink ist abgelaufen")
	require.Empty(t, f.Started("CaptureDeposit"))
}

func TestUnitLinkDeclinedThenPaid(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	start := env.Now()
	env.RegisterDelayedCallback(func() { f.decline(); relay(t, env, deposit.EventIntentFailed) }, 5*time.Minute)
	env.RegisterDelayedCallback(func() { f.pay(); relay(t, env, deposit.EventIntentCapturable) }, 10*time.Minute)
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, []string{
		"CreatePaymentLink create-payment-link", "SendConfirmation send-payment-link",
		"GetPaymentLink read-payment-link-1", "GetPaymentLink read-payment-link-2", "CaptureDeposit capture-deposit",
	}, f.Sequence("payment"), "the decline kept the link open")
	capture := f.Started("CaptureDeposit")[0]
	require.Less(t, capture.At.Sub(start), 30*time.Minute, "captured on the payment, not at the deadline")
}

func TestUnitLinkCancelledWhileOpen(t *testing.T) {
	cases := []struct {
		name       string
		paidBefore bool // paid just before the cancel, webhook not yet in
		told       bool
	}{
		{"nothing paid", false, false},
		{"paid as the booking was cancelled: voided and told", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitLinkEnv(t)
			env.RegisterDelayedCallback(func() {
				if tc.paidBefore {
					f.pay()
				}
				env.SignalWorkflow(workflows.SignalCancel, true)
			}, 5*time.Minute)
			env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
			st := unitResult(t, env)

			require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
			require.Equal(t, deposit.Voided, st.Payment)
			payment := f.Sequence("payment")
			want := []string{"ExpirePaymentLink expire-payment-link-undo"}
			if tc.paidBefore {
				want = append(want, "VoidDeposit void-deposit") // by the ID the closed session names
			}
			require.Equal(t, want, payment[2:2+len(want)], "the link is closed before the void: nothing can be paid after it")
			if !tc.paidBefore {
				require.Empty(t, f.Started("VoidDeposit"), "the session closed unpaid proves there is no deposit: no search")
			}
			require.NotEqual(t, payments.SessionOpen, f.link.session.Status)
			require.Empty(t, f.Started("CaptureDeposit"), "nothing charged")
			require.False(t, f.Live(), "no authorisation left")
			_, told := f.messages()["payment/send-payment-late-refund"]
			require.Equal(t, tc.told, told)
			require.Contains(t, f.Sequence("appointment"), "ReleaseHold release-hold")
		})
	}
}

// TestUnitLinkCancelledWhileItIsMadeIsNeverSent: the customer cancels
// while the payment API is down and the link is still being made; the
// link made once the API is back is closed, not sent: a customer who read
// "Wir stornieren Ihre noch nicht bestätigte Buchung" gets no payment
// link after it.
func TestUnitLinkCancelledWhileItIsMadeIsNeverSent(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	start := env.Now()
	f.link.down = func() bool { return env.Now().Before(start.Add(20 * time.Second)) }
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalCancel, true) }, 5*time.Second)
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusCancelled, st.Status, st.Reason)
	require.Equal(t, 1, f.link.created, "the link was made once the API was back")
	_, sent := f.messages()["payment/send-payment-link"]
	require.False(t, sent, "no link after the cancel")
	require.NotEqual(t, payments.SessionOpen, f.link.session.Status, "the link made meanwhile is closed")
	require.Empty(t, f.Started("CaptureDeposit"))
	require.False(t, f.Live(), "no authorisation left")
}

func TestUnitLinkCreateOutlastsAPaymentOutage(t *testing.T) {
	cases := []struct {
		name      string
		outage    time.Duration
		confirmed bool
		rounds    int // create keys used (the test environment caps a round at 10 attempts, ~43 s)
	}{
		{"a 20 s outage: one key retried", 20 * time.Second, true, 1},
		{"a 2 min outage: further rounds with new keys", 2 * time.Minute, true, 3},
		{"an hour's outage: nothing booked, the customer told", time.Hour, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitLinkEnv(t)
			start := env.Now()
			f.link.down = func() bool { return env.Now().Before(start.Add(tc.outage)) }
			env.RegisterDelayedCallback(func() { f.pay(); relay(t, env, deposit.EventCheckoutCompleted) }, 10*time.Minute)
			env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
			st := unitResult(t, env)

			creates := f.Started("CreatePaymentLink")
			require.Greater(t, len(creates), 1, "retried through the outage")
			for _, c := range creates {
				require.Less(t, c.At.Sub(start), 5*time.Minute, "no round starts once its link would outlive the hold")
			}
			if !tc.confirmed {
				require.Equal(t, workflows.StatusPaymentFailed, st.Status)
				require.Contains(t, st.Reason, "payment_link_unavailable")
				require.Equal(t, 0, f.link.created)
				require.Contains(t, f.Sequence("appointment"), "ReleaseHold release-hold")
				msg := f.messages()["appointment/send-payment-unavailable"]
				require.Equal(t, activities.MessageKindPaymentUnavailable, msg.Kind)
				require.Contains(t, msg.Text, "nicht gebucht und nichts berechnet")
				return
			}
			require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
			require.Equal(t, 1, f.link.created)
			var ids []string
			for _, c := range creates {
				ids = append(ids, c.ID)
			}
			require.Len(t, slices.Compact(ids), tc.rounds, "%v", slices.Compact(ids))
		})
	}
}

// TestUnitLinkPaidDuringAnOutageIsReadWhenTheAPIIsBack: the webhook of a
// payment arrives while the payment API cannot be read; the saga reads the
// link again after a pause instead of waiting for the link's deadline, so
// the customer is booked minutes after the API is back, not half an hour.
func TestUnitLinkPaidDuringAnOutageIsReadWhenTheAPIIsBack(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	start := env.Now()
	outageEnds := start.Add(8 * time.Minute)
	f.link.readDown = func() bool { return env.Now().Before(outageEnds) }
	env.RegisterDelayedCallback(func() { f.pay(); relay(t, env, deposit.EventCheckoutCompleted) }, 5*time.Minute)
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusConfirmed, st.Status, st.Reason)
	require.Equal(t, deposit.Captured, st.Payment)
	captures := f.Started("CaptureDeposit")
	require.Len(t, captures, 1)
	require.Less(t, captures[0].At.Sub(outageEnds), 2*time.Minute, "read again soon after the API was back")
	require.Empty(t, f.Started("ExpirePaymentLink"), "no deadline reached")
}

// TestUnitLinkNeverMadeLeavesNothingToVoid: an outage of the payment API
// outlasts every round of creating the link. No link was sent, so nothing
// can ever be paid, and the payment saga says so: the appointment ends at
// once, told and released, instead of voiding by reference against a
// search that lags writes (Stripe's), which never proves the absence (in
// the drill such a booking's compensation retried until its week's bound
// and the wish stayed open).
func TestUnitLinkNeverMadeLeavesNothingToVoid(t *testing.T) {
	env, f := newUnitLinkEnv(t)
	f.link.down = func() bool { return true }
	f.Void = func(_ context.Context, in activities.IntentInput) (activities.IntentResult, error) {
		if in.IntentID == "" {
			return activities.IntentResult{}, errors.New("the search, which lags writes, shows no deposit yet: not proven absent")
		}
		return activities.IntentResult{}, nil
	}
	env.ExecuteWorkflow(appointment.WorkflowName, unitLinkRequest())
	st := unitResult(t, env)

	require.Equal(t, workflows.StatusPaymentFailed, st.Status)
	require.Contains(t, st.Reason, "payment_link_unavailable")
	require.Empty(t, st.ReviewCase, "nothing for a person: nothing was paid")
	require.Equal(t, 0, f.link.created)
	require.NotContains(t, f.Sequence("appointment"), "VoidDeposit void-deposit", "no search for a deposit that cannot exist")
	require.Contains(t, f.Sequence("appointment"), "ReleaseHold release-hold")
	msg := f.messages()["appointment/send-payment-unavailable"]
	require.Contains(t, msg.Text, "nicht gebucht und nichts berechnet")
}

// TestUnitCallerLinkGoesWhereTheShopSendsIt: a caller's payment link goes
// by WhatsApp, unless the shop's policy sends callers their links by SMS
// (policies.caller_links); a WhatsApp customer gets it on WhatsApp either
// way.
func TestUnitCallerLinkGoesWhereTheShopSendsIt(t *testing.T) {
	cases := []struct {
		name    string
		channel workflows.Channel
		policy  string
		want    string
	}{
		{"a caller, no policy", workflows.ChannelVoice, "", "whatsapp"},
		{"a caller, the shop sends callers SMS", workflows.ChannelVoice, "sms", "sms"},
		{"a WhatsApp customer, whatever the policy", workflows.ChannelWhatsApp, "sms", "whatsapp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, f := newUnitLinkEnv(t)
			req := unitLinkRequest()
			req.Channel, req.Terms = tc.channel, &tenants.Terms{Language: "de", CallerLinks: tc.policy}
			env.RegisterDelayedCallback(func() {
				f.pay()
				relay(t, env, deposit.EventCheckoutCompleted)
			}, 5*time.Minute)
			env.ExecuteWorkflow(appointment.WorkflowName, req)
			unitResult(t, env)
			require.Equal(t, tc.want, f.messages()["payment/send-payment-link"].Channel)
		})
	}
}
