package outbox_test

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/outbox"
)

const text = "Ihr Termin am Dienstag um 14 Uhr ist bestätigt."

// requireNoPlaintext: the row holds neither the number nor the text, in
// clear or hex-encoded; the recipient column keeps the masked number.
func (e *env) requireNoPlaintext(id string) {
	e.t.Helper()
	var row, recipient, body string
	var sealed []byte
	require.NoError(e.t, e.store.Pool.QueryRow(context.Background(),
		`SELECT o::text, recipient, body, sealed FROM outbox_messages o WHERE id = $1`, id).Scan(&row, &recipient, &body, &sealed))
	require.NotEmpty(e.t, sealed)
	require.Equal(e.t, "+49·········78", recipient)
	require.Empty(e.t, body)
	for _, secret := range []string{customer, "Dienstag"} {
		require.NotContains(e.t, string(sealed), secret)
		require.NotContains(e.t, row, secret)
		require.NotContains(e.t, row, hex.EncodeToString([]byte(secret)))
	}
}

// TestSealedMessageIsSentAsWritten: with payload keys the row is
// ciphertext, the same message reserved again meets it, a different one
// is a conflict, and the relay sends the number and text as written.
func TestSealedMessageIsSentAsWritten(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.store.Sealer = testsupport.Sealer(t, testsupport.PayloadKey(t, "A"))
	m := e.reserve("bk_1", "whatsapp", customer, text)
	require.Equal(t, customer, m.Recipient)
	require.Equal(t, text, m.Body)
	e.requireNoPlaintext(m.ID)

	again := e.reserve("bk_1", "whatsapp", customer, text)
	require.Equal(t, m.ID, again.ID)
	_, err := e.store.Reserve(context.Background(), "key-bk_1", outbox.Message{
		Tenant: "tenant-1", Reference: "bk_1", Kind: "confirmation", Channel: "whatsapp", Recipient: customer, Body: "other",
	})
	require.ErrorIs(t, err, outbox.ErrConflict)

	require.Equal(t, 1, e.runOnce(e.relay()))
	msgs := e.fake.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, "whatsapp:"+customer, msgs[0].To)
	require.Equal(t, text, msgs[0].Body)
	e.requireNoPlaintext(m.ID)
}

// TestMessageAcrossKeyChanges: a message reserved with key A is sent
// after key B is added as current, and one reserved in clear (before the
// keys) is sent once they are configured.
func TestMessageAcrossKeyChanges(t *testing.T) {
	t.Parallel()
	a, b := testsupport.PayloadKey(t, "A"), testsupport.PayloadKey(t, "B")
	tests := []struct {
		name          string
		before, after *payloadcrypt.Codec
	}{
		{"rotated: B added as current", testsupport.Sealer(t, a), testsupport.Sealer(t, b, a)},
		{"upgrade: clear row, keys configured", nil, testsupport.Sealer(t, a)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			e.store.Sealer = tt.before
			e.reserve("bk_1", "sms", customer, text)
			e.store.Sealer = tt.after
			require.Equal(t, 1, e.runOnce(e.relay()))
			msgs := e.fake.Messages()
			require.Len(t, msgs, 1)
			require.Equal(t, customer, msgs[0].To)
			require.Equal(t, text, msgs[0].Body)
		})
	}
}

// TestSealedMessageThatDoesNotOpenIsNotSent: a tampered row, a text
// moved from another row, a key no longer configured or a relay without
// keys: the message is not sent (no garbage to a customer), stays
// pending and unattempted for a relay with its key, and the error names
// it; the other messages go out.
func TestSealedMessageThatDoesNotOpenIsNotSent(t *testing.T) {
	t.Parallel()
	a := testsupport.PayloadKey(t, "A")
	tests := []struct {
		name   string
		change string // SQL on the rows; $1 the broken row, $2 another
		relay  *payloadcrypt.Codec
		want   error
	}{
		{"tampered", `UPDATE outbox_messages SET sealed = set_byte(sealed, 40, (get_byte(sealed, 40) + 1) % 256) WHERE id = $1 AND $2 <> ''`, testsupport.Sealer(t, a), payloadcrypt.ErrSealed},
		{"moved from another row", `UPDATE outbox_messages SET sealed = (SELECT sealed FROM outbox_messages WHERE id = $2) WHERE id = $1`, testsupport.Sealer(t, a), payloadcrypt.ErrSealed},
		{"key removed", "", testsupport.Sealer(t, testsupport.PayloadKey(t, "B")), payloadcrypt.ErrUnknownKey},
		{"no keys", "", nil, payloadcrypt.ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			e.store.Sealer = testsupport.Sealer(t, a)
			broken := e.reserve("bk_1", "sms", customer, text)
			other := e.reserve("bk_2", "sms", "+4915199990000", "Ihr Termin am Mittwoch um 9 Uhr ist bestätigt.")
			if tt.change != "" {
				_, err := e.store.Pool.Exec(context.Background(), tt.change, broken.ID, other.ID)
				require.NoError(t, err)
			}
			// The other row is read with the right key in the first three
			// cases; without it neither opens.
			e.store.Sealer = tt.relay
			sent, err := e.relay().RunOnce(context.Background())
			require.ErrorIs(t, err, tt.want)
			require.ErrorContains(t, err, broken.ID)
			for _, m := range e.fake.Messages() {
				require.NotEqual(t, customer, m.To, "the broken message is not sent")
			}
			require.Equal(t, len(e.fake.Messages()), sent)
			got := e.row(broken.ID)
			require.Equal(t, "pending", got.State)
			require.False(t, got.Attempted)
		})
	}
}
