package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/workflows"
)

// TestPaymentLinkOnlyWhileUnpaid: the saga keeps its payment link in its
// state after the customer paid; the tool offers it only while the
// booking waits for the payment, never for a booking that is paid,
// refused or cancelled (an agent would read out a link to pay for
// nothing).
func TestPaymentLinkOnlyWhileUnpaid(t *testing.T) {
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
		got := answer(BookingAnswer{WorkflowID: "appointment:demo:x"}, workflows.BookingState{Status: c.status, PaymentURL: link}, true, false)
		require.Equal(t, c.want, got.PaymentURL, c.status)
	}
}
