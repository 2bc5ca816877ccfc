package payloadcrypt_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// TestSealHidesTheDataAndOpenRestoresIt: a sealed blob names its key,
// holds no plaintext, differs per call (random nonce) and opens to the
// exact bytes under the same AAD.
func TestSealHidesTheDataAndOpenRestoresIt(t *testing.T) {
	c := codec(t, key(t, "k1"))
	plain := []byte(`{"to":"` + phone + `","text":"Haarschnitt morgen 10 Uhr"}`)
	aad := payloadcrypt.AAD("outbox_messages", "msg_1")
	a, b := c.Seal(plain, aad), c.Seal(plain, aad)
	require.False(t, bytes.Contains(a, []byte(phone)))
	require.False(t, bytes.Contains(a, []byte("Haarschnitt")))
	require.Contains(t, string(a[:8]), "k1", "the header names the key")
	require.NotEqual(t, a, b, "a fresh nonce per blob")
	got, err := c.Open(a, aad)
	require.NoError(t, err)
	require.Equal(t, plain, got)
}

// TestSealKeyRotation: a blob sealed with key A still opens once key B is
// current, new blobs use B, and a set without A names the missing key.
func TestSealKeyRotation(t *testing.T) {
	a, b := key(t, "A"), key(t, "B")
	aad := payloadcrypt.AAD("inbox_events", "twilio", "SM1")
	old := codec(t, a).Seal([]byte(phone), aad)

	rotated := codec(t, b, a)
	got, err := rotated.Open(old, aad)
	require.NoError(t, err)
	require.Equal(t, phone, string(got))
	fresh := rotated.Seal([]byte(phone), aad)
	_, err = codec(t, a).Open(fresh, aad)
	require.ErrorIs(t, err, payloadcrypt.ErrUnknownKey, "new blobs use B")
	require.ErrorContains(t, err, `"B"`)

	_, err = codec(t, b).Open(old, aad)
	require.ErrorIs(t, err, payloadcrypt.ErrUnknownKey)
	require.ErrorContains(t, err, `"A"`)
}

// TestOpenRefuses: a tampered, truncated, relabelled or moved blob, and a
// blob read without keys, are errors that say so, never garbage.
func TestOpenRefuses(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	c := codec(t, k1, k2)
	aad := payloadcrypt.AAD("outbox_messages", "msg_1")
	tests := []struct {
		name  string
		codec *payloadcrypt.Codec
		blob  func(b []byte) []byte
		aad   []byte
		want  error
	}{
		{"tampered ciphertext", c, func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, aad, payloadcrypt.ErrSealed},
		{"truncated", c, func(b []byte) []byte { return b[:10] }, aad, payloadcrypt.ErrSealed},
		{"empty", c, func([]byte) []byte { return []byte{} }, aad, payloadcrypt.ErrSealed},
		{"unknown version", c, func(b []byte) []byte { b[0] = 9; return b }, aad, payloadcrypt.ErrSealed},
		{"relabelled key", c, func(b []byte) []byte { b[3] = '2'; return b }, aad, payloadcrypt.ErrSealed},
		{"moved to another row", c, func(b []byte) []byte { return b }, payloadcrypt.AAD("outbox_messages", "msg_2"), payloadcrypt.ErrSealed},
		{"moved to another table", c, func(b []byte) []byte { return b }, payloadcrypt.AAD("inbox_events", "msg_1"), payloadcrypt.ErrSealed},
		{"no keys", nil, func(b []byte) []byte { return b }, aad, payloadcrypt.ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob := tt.blob(c.Seal([]byte(phone), aad))
			got, err := tt.codec.Open(blob, tt.aad)
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, got)
		})
	}
}

// TestSealWithoutKeys: a nil codec (no BOOKONCE_PAYLOAD_KEYS) seals
// nothing, so callers store in clear, as Temporal payloads are then.
func TestSealWithoutKeys(t *testing.T) {
	var c *payloadcrypt.Codec
	require.Nil(t, c.Seal([]byte(phone), nil))
}

// TestAADSeparatesRows: rows whose key columns concatenate to the same
// text still get different AADs.
func TestAADSeparatesRows(t *testing.T) {
	require.NotEqual(t, payloadcrypt.AAD("t", "a", "bc"), payloadcrypt.AAD("t", "ab", "c"))
	require.NotEqual(t, payloadcrypt.AAD("t", "a"), payloadcrypt.AAD("ta"))
	require.Equal(t, payloadcrypt.AAD("t", "a"), payloadcrypt.AAD("t", "a"))
}

// TestKeyIDFitsTheSealedHeader: a key ID longer than the header's one
// length byte can count is refused when the key set is built.
func TestKeyIDFitsTheSealedHeader(t *testing.T) {
	k := key(t, string(bytes.Repeat([]byte("k"), 256)))
	_, err := payloadcrypt.New([]payloadcrypt.Key{k})
	require.ErrorContains(t, err, "longer than 255 bytes")
	k.ID = k.ID[:255]
	_, err = payloadcrypt.New([]payloadcrypt.Key{k})
	require.NoError(t, err)
}

// BenchmarkSealOpen seals and opens a stored response of typical size
// (the idempotency layer's budget is an added p95 under 1 ms).
func BenchmarkSealOpen(b *testing.B) {
	k := payloadcrypt.Key{ID: "bench", Secret: make([]byte, payloadcrypt.KeySize)}
	c, err := payloadcrypt.New([]payloadcrypt.Key{k})
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte(`{"id":"hold_1","customer":"`+phone+`"}`), 20) // ~1 KB
	aad := payloadcrypt.AAD("idempotency_keys", "demo", "POST /v1/holds", "key-1")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := c.Open(c.Seal(body, aad), aad); err != nil {
			b.Fatal(err)
		}
	}
}
