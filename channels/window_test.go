package channels_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/twilio"
)

// TestWhatsAppMessageOpensTheServiceWindow: a customer's WhatsApp
// message, recorded in the inbox, opens WhatsApp's 24-hour window for the
// relay, by the customer's key (sealed rows keep no number); a call does
// not open it, and it closes 24 hours later, less the relay's margin.
func TestWhatsAppMessageOpensTheServiceWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	writer, caller := newCustomer(), newCustomer()
	code, _, err := e.sim.Post(ctx, channels.RouteWhatsApp, twilio.WhatsApp(twilio.NewSID("SM"), writer, "Hallo"))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	code, _, err = e.sim.Post(ctx, channels.RouteVoice, url.Values{"CallSid": {twilio.NewSID("CA")}, "AccountSid": {"ACsimulated"},
		"From": {caller}, "To": {"+4930123456"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)

	w := channels.ServiceWindow{Pool: e.pool, Keys: e.gw.Keys}
	now := time.Now()
	cases := []struct {
		name      string
		recipient string
		at        time.Time
		open      bool
	}{
		{"the writer, now", writer, now, true},
		{"the writer as a WhatsApp address", "whatsapp:" + writer, now, true},
		{"the writer 23 hours later", writer, now.Add(23 * time.Hour), true},
		{"the writer 24 hours later", writer, now.Add(24 * time.Hour), false},
		{"the caller", caller, now, false},
		{"someone who never wrote", newCustomer(), now, false},
	}
	for _, tc := range cases {
		open, err := w.Open(ctx, "demo", tc.recipient, tc.at)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.open, open, tc.name)
	}
	open, err := w.Open(ctx, "london", writer, now)
	require.NoError(t, err)
	require.False(t, open, "the window is the shop's: another tenant's is its own")
}

// TestFailedDeliveryIsRecordedWithItsReason: a message Twilio accepted
// and then could not deliver (63016: free text outside WhatsApp's window)
// ends 'failed' with the reason on its row, which the ops page shows:
// never a silent loss.
func TestFailedDeliveryIsRecordedWithItsReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.pool.Exec(ctx, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, provider_id, idempotency_key)
		VALUES ('msg_w', 'demo', 'r', 'reminder-24h', 'whatsapp', '+4915155555555', 'hi', 'sent', 'SMw', 'k')`)
	require.NoError(t, err)
	code, _, err := e.sim.Post(ctx, channels.RouteStatus+"?outbox_id=msg_w", url.Values{"MessageSid": {"SMw"},
		"MessageStatus": {"failed"}, "ErrorCode": {"63016"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	var state, reason string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT state, coalesce(last_error, '') FROM outbox_messages WHERE id = 'msg_w'`).Scan(&state, &reason))
	require.Equal(t, "failed", state)
	require.Contains(t, reason, "63016")
	require.Contains(t, reason, "24-hour")
}
