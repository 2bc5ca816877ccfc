package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/outbox"
)

// TestLostStatusCallbackIsFoundByAskingTwilio: Twilio posts a status
// callback once; when the gateway misses it (here: the callback URL does
// not resolve), a failed message would stay 'sent'. StatusPoll after it
// was sent the relay reads the message at Twilio and records what the
// callback would have said: a number without WhatsApp is 'failed' with
// 63003 and gets its SMS once; a message still 'sent' at Twilio stays so,
// asked again only StatusPoll later; one older than a day is not asked.
func TestLostStatusCallbackIsFoundByAskingTwilio(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		noWA    bool
		wait    time.Duration
		state   string
		code    string
		asked   bool
		wantSMS bool
	}{
		{"too early to ask", true, outbox.DefaultStatusPoll / 2, "sent", "", false, false},
		{"a number without WhatsApp", true, outbox.DefaultStatusPoll + time.Minute, "failed", "63003", true, true},
		{"still sent at Twilio", false, outbox.DefaultStatusPoll + time.Minute, "sent", "", true, false},
		{"older than a day", true, 25 * time.Hour, "sent", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			s := e.fallbackRelay(tc.noWA)
			e.fake.Inbound("whatsapp:"+customer, "whatsapp:"+from, "Hallo") // free text may answer
			m := e.reserve("bk_1", "whatsapp", customer, "Ihr Termin am Dienstag um 14 Uhr ist bestätigt.")
			require.Equal(t, 1, e.runOnce(s))
			require.Equal(t, "sent", e.row(m.ID).State, "the callback is lost")

			e.advance(tc.wait)
			e.runOnce(s)
			e.runOnce(s) // the fallback, if any, once
			require.Equal(t, tc.state, e.row(m.ID).State)
			var code *string
			var asked bool
			require.NoError(t, e.store.Pool.QueryRow(context.Background(),
				`SELECT failure_code, status_checked_at IS NOT NULL FROM outbox_messages WHERE id = $1`, m.ID).Scan(&code, &asked))
			require.Equal(t, tc.asked, asked)
			if tc.code != "" {
				require.Equal(t, tc.code, *code)
				require.Contains(t, e.row(m.ID).LastError, "cannot receive WhatsApp")
			}
			var sms int
			for _, msg := range e.fake.Messages() {
				if msg.To == customer {
					sms++
				}
			}
			require.Equal(t, map[bool]int{true: 1, false: 0}[tc.wantSMS], sms, "the SMS fallback, once")
		})
	}
}
