package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/workflows"
	"github.com/bookonce/bookonce/workflows/appointment"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// TestPaymentLinkOnlyWhileUnpaid: the saga keeps its payment link in its
// state after the customer paid; the tool offers it only while the
// booking waits for the payment, never for a booking that is paid,
// refused or cancelled (an agent would read out a link to pay for
// nothing).
func TestPaymentLinkOnlyWhileUnpaid(t *testing.T) {
	t.Parallel()
	const link = "http://pay.example/pay/cs_1"
	for _, c := range []struct {
		status workflows.BookingStatus
		want   string
	}{
		{workflows.StatusAuthorizing, link},
		{workflows.StatusConfirmed, ""},
		{workflows.StatusCancelled, ""},
		{workflows.StatusPaymentFailed, ""},
	} {
		got := answer(BookingAnswer{WorkflowID: "appointment:demo:x"}, appointment.State{Status: c.status, PaymentURL: link}, true, false)
		require.Equal(t, c.want, got.PaymentURL, c.status)
	}
}

// TestCancelledAnswerClaimsOnlyAMessageThatWasReserved: cancel_booking said
// "the customer was sent a message" even when the lifecycle's message step
// ended not sent (no outbox row); then the agent must tell the customer.
func TestCancelledAnswerClaimsOnlyAMessageThatWasReserved(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		st        lifecycle.State
		want, not string
	}{
		{"sent", lifecycle.State{Status: workflows.StatusCancelled, Deposit: lifecycle.DepositRefunded, MessageID: "om_1"},
			"refunded in full and the customer was sent a message", "tell them yourself"},
		{"not sent", lifecycle.State{Status: workflows.StatusCancelled, Deposit: lifecycle.DepositRefunded},
			"refunded in full and no message could be sent to the customer: tell them yourself", "was sent a message"},
		{"kept, not sent", lifecycle.State{Status: workflows.StatusCancelled, Deposit: lifecycle.DepositKept, Reason: "late"},
			"kept (late) and no message could be sent", "was sent a message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := cancelled(ChangeOutput{}, tc.st)
			require.Equal(t, StatusCancelled, out.Status)
			require.Contains(t, out.Message, tc.want)
			require.NotContains(t, out.Message, tc.not)
		})
	}
}
