package testsupport

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// PayloadKey returns a fresh random payload key named id.
func PayloadKey(t testing.TB, id string) payloadcrypt.Key {
	t.Helper()
	k := payloadcrypt.Key{ID: id, Secret: make([]byte, payloadcrypt.KeySize)}
	_, err := rand.Read(k.Secret)
	require.NoError(t, err)
	return k
}

// Sealer returns the key set of keys (the first one encrypts), as the
// stores that seal personal data at rest take it.
func Sealer(t testing.TB, keys ...payloadcrypt.Key) *payloadcrypt.Codec {
	t.Helper()
	c, err := payloadcrypt.New(keys)
	require.NoError(t, err)
	return c
}
