package outbox_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/twilio"
)

// TestUndeliverableWhatsAppGoesOnceBySMS: a WhatsApp message to a number
// without WhatsApp (a caller's landline) is accepted by Twilio and then
// reported undeliverable (63003). The relay sends it once more, by SMS to
// the same number with the same text, exactly once however often it
// runs; a message that failed for another reason (63016: outside the
// window) gets no SMS.
func TestUndeliverableWhatsAppGoesOnceBySMS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		noWA     bool
		wantSMS  bool
		wantCode int
	}{
		{"a number without WhatsApp", true, true, twilio.ErrCodeNotOnWhatsApp},
		{"outside the window", false, false, twilio.ErrCodeOutsideWindow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			s := e.fallbackRelay(tc.noWA)
			const text = "Bitte zahlen Sie die Anzahlung von 20,00 € hier: https://pay.example/l/1"
			m := e.reserve("bk_1", "whatsapp", customer, text)
			require.Equal(t, 1, e.runOnce(s))
			wa := e.fake.Messages()[0]
			require.Equal(t, tc.wantCode, wa.ErrorCode)
			// The status callback, as the gateway hands it to the outbox.
			code := strconv.Itoa(wa.ErrorCode)
			require.NoError(t, e.store.RecordStatus(context.Background(), m.ID, wa.Sid, wa.Status,
				outbox.Failure{Code: code, Reason: twilio.DescribeFailure(code)}))
			require.Equal(t, "failed", e.row(m.ID).State)
			require.Contains(t, e.row(m.ID).LastError, code)

			for range 3 {
				e.runOnce(s)
			}
			msgs := e.fake.Messages()
			if !tc.wantSMS {
				require.Len(t, msgs, 1, "no SMS for a message that failed for another reason")
				return
			}
			require.Len(t, msgs, 2, "one SMS, however often the relay runs")
			sms := msgs[1]
			require.Equal(t, customer, sms.To, "by SMS to the same number")
			require.Equal(t, from, sms.From)
			require.Equal(t, text, sms.Body)
			require.Equal(t, "sent", sms.Status)
		})
	}
}

// fallbackRelay is a relay that sends a WhatsApp message the number
// cannot receive once more by SMS; noWA: the customer has no WhatsApp.
func (e *env) fallbackRelay(noWA bool) *outbox.Sender {
	s := e.relay()
	s.SMSFallback = twilio.NotOnChannel
	if noWA {
		e.fake.NotOnWhatsApp(customer)
	}
	return s
}
