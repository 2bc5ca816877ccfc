package payloadcrypt_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

const phone = "+4915112345678"

func key(t *testing.T, id string) payloadcrypt.Key {
	t.Helper()
	k := payloadcrypt.Key{ID: id, Secret: make([]byte, payloadcrypt.KeySize)}
	_, err := rand.Read(k.Secret)
	require.NoError(t, err)
	return k
}

func codec(t *testing.T, keys ...payloadcrypt.Key) *payloadcrypt.Codec {
	t.Helper()
	c, err := payloadcrypt.New(keys)
	require.NoError(t, err)
	return c
}

func plain(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

// TestEncodeHidesThePayloadAndDecodeRestoresIt: the encoded payload names
// the key, holds no plaintext, differs per call (random nonce) and
// decodes to the original, encoding metadata included.
func TestEncodeHidesThePayloadAndDecodeRestoresIt(t *testing.T) {
	c := codec(t, key(t, "k1"))
	orig := plain(t, map[string]string{"from": phone, "text": "Haarschnitt morgen 10 Uhr"})
	enc, err := c.Encode([]*commonpb.Payload{orig, orig})
	require.NoError(t, err)
	require.Len(t, enc, 2)
	for _, p := range enc {
		require.Equal(t, payloadcrypt.EncodingEncrypted, string(p.GetMetadata()[payloadcrypt.MetadataEncoding]))
		require.Equal(t, "k1", string(p.GetMetadata()[payloadcrypt.MetadataKeyID]))
		require.False(t, bytes.Contains(p.GetData(), []byte(phone)))
		require.False(t, bytes.Contains(p.GetData(), []byte("Haarschnitt")))
	}
	require.NotEqual(t, enc[0].GetData(), enc[1].GetData(), "a fresh nonce per payload")
	dec, err := c.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, orig.GetData(), dec[0].GetData())
	require.Equal(t, orig.GetMetadata(), dec[0].GetMetadata())
}

// TestKeyRotation: a payload encrypted with key 1 still decodes when key
// 2 is current, new payloads use key 2, and a set without key 1 names
// the missing key.
func TestKeyRotation(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	old, err := codec(t, k1).Encode([]*commonpb.Payload{plain(t, phone)})
	require.NoError(t, err)

	rotated := codec(t, k2, k1)
	require.Equal(t, "k2", rotated.CurrentKeyID())
	fresh, err := rotated.Encode([]*commonpb.Payload{plain(t, "text")})
	require.NoError(t, err)
	require.Equal(t, "k2", string(fresh[0].GetMetadata()[payloadcrypt.MetadataKeyID]))
	dec, err := rotated.Decode(append(old, fresh...))
	require.NoError(t, err)
	require.Equal(t, plain(t, phone).GetData(), dec[0].GetData())
	require.Equal(t, plain(t, "text").GetData(), dec[1].GetData())

	_, err = codec(t, k2).Decode(old)
	require.ErrorIs(t, err, payloadcrypt.ErrUnknownKey)
	require.ErrorContains(t, err, `"k1"`)
}

// TestDecodeRefuses: tampered ciphertext, a payload relabelled to another
// key and a truncated payload are errors, never garbage.
func TestDecodeRefuses(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	c := codec(t, k1, k2)
	tests := []struct {
		name   string
		change func(p *commonpb.Payload)
	}{
		{"tampered ciphertext", func(p *commonpb.Payload) { p.Data[len(p.Data)-1] ^= 1 }},
		{"relabelled key", func(p *commonpb.Payload) { p.Metadata[payloadcrypt.MetadataKeyID] = []byte("k2") }},
		{"truncated", func(p *commonpb.Payload) { p.Data = p.Data[:4] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := c.Encode([]*commonpb.Payload{plain(t, phone)})
			require.NoError(t, err)
			tt.change(enc[0])
			_, err = c.Decode(enc)
			require.Error(t, err)
		})
	}
}

// TestDecodePassesClearPayloadsThrough: histories recorded before
// encryption keep replaying.
func TestDecodePassesClearPayloadsThrough(t *testing.T) {
	orig := plain(t, phone)
	dec, err := codec(t, key(t, "k1")).Decode([]*commonpb.Payload{orig})
	require.NoError(t, err)
	require.Same(t, orig, dec[0])
}

// TestLoad reads keys from the environment or a file and explains what
// is wrong without quoting a secret.
func TestLoad(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	b64 := func(k payloadcrypt.Key) string { return base64.StdEncoding.EncodeToString(k.Secret) }
	file := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(file, []byte("# rotated 2026-12\nk2:"+b64(k2)+"\nk1:"+b64(k1)+"\n"), 0o600))
	tests := []struct {
		name    string
		env     map[string]string
		current string // "" with wantErr "": encryption off
		wantErr string
	}{
		{"none", map[string]string{}, "", ""},
		{"inline", map[string]string{payloadcrypt.EnvKeys: "k1:" + b64(k1) + ", k2:" + b64(k2)}, "k1", ""},
		{"file", map[string]string{payloadcrypt.EnvKeysFile: file}, "k2", ""},
		{"both", map[string]string{payloadcrypt.EnvKeys: "k1:" + b64(k1), payloadcrypt.EnvKeysFile: file}, "", "not both"},
		{"short key", map[string]string{payloadcrypt.EnvKeys: "k1:c2hvcnQ="}, "", "AES-256 needs 32"},
		{"not base64", map[string]string{payloadcrypt.EnvKeys: "k1:%%%"}, "", "not standard base64"},
		{"no id", map[string]string{payloadcrypt.EnvKeys: b64(k1)}, "", "not id:base64key"},
		{"duplicate id", map[string]string{payloadcrypt.EnvKeys: "k1:" + b64(k1) + ",k1:" + b64(k2)}, "", "listed twice"},
		{"missing file", map[string]string{payloadcrypt.EnvKeysFile: file + ".absent"}, "", payloadcrypt.EnvKeysFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := payloadcrypt.Load(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, err.Error(), b64(k1))
				return
			}
			require.NoError(t, err)
			if tt.current == "" {
				require.Nil(t, c)
				return
			}
			require.Equal(t, tt.current, c.CurrentKeyID())
		})
	}
}
