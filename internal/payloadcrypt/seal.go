package payloadcrypt

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// Sealed blobs are the at-rest form of personal data in bookonce's own
// tables (stored idempotency responses, inbox payloads, outbox texts),
// encrypted with the same key set as Temporal payloads:
//
//	version (1 byte) | key ID length (1 byte) | key ID | nonce (12) | AES-GCM ciphertext and tag
//
// The header (version and key ID) and the caller's AAD are authenticated:
// a blob relabelled to another key, or copied into another row (whose AAD
// names another table or ID), fails to open instead of reading as garbage.
const sealVersion byte = 1

// maxKeyIDLen is the longest key ID a sealed header can name.
const maxKeyIDLen = 255

// ErrSealed is wrapped by every failure to open a sealed blob that was
// tampered with, truncated, copied from another row or sealed under a
// different key with the same ID.
var ErrSealed = errors.New("sealed data does not open")

// ErrNoKeys is returned when a sealed blob is read by a process without
// keys (BOOKONCE_PAYLOAD_KEYS unset): it cannot be read in clear.
var ErrNoKeys = errors.New("data is sealed but no payload keys are configured (" + EnvKeys + ")")

// Seal encrypts plaintext with the current key, bound to aad (see AAD):
// only Open with the same aad gives it back. A nil Codec (no keys
// configured) returns nil: the caller stores the data in clear, as
// Temporal payloads are without keys.
func (c *Codec) Seal(plaintext, aad []byte) []byte {
	if c == nil {
		return nil
	}
	aead := c.aeads[c.current]
	header := sealHeader(c.current)
	out := make([]byte, len(header)+aead.NonceSize(), len(header)+aead.NonceSize()+len(plaintext)+aead.Overhead())
	copy(out, header)
	nonce := out[len(header):]
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	return aead.Seal(out, nonce, plaintext, append(header, aad...))
}

// Open decrypts a blob of Seal with any key of the set. Errors name the
// key ID, never a secret: ErrUnknownKey for a key not configured,
// ErrSealed for a blob that does not open under aad, ErrNoKeys on a nil
// Codec.
func (c *Codec) Open(sealed, aad []byte) ([]byte, error) {
	if c == nil {
		return nil, ErrNoKeys
	}
	if len(sealed) < 2 || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: not a version %d sealed blob", ErrSealed, sealVersion)
	}
	idEnd := 2 + int(sealed[1])
	if len(sealed) < idEnd {
		return nil, fmt.Errorf("%w: truncated header", ErrSealed)
	}
	id := string(sealed[2:idEnd])
	aead, ok := c.aeads[id]
	if !ok {
		return nil, fmt.Errorf("%w: key ID %q (configured: %s)", ErrUnknownKey, id, EnvKeys)
	}
	if len(sealed) < idEnd+aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("%w: truncated (key %q)", ErrSealed, id)
	}
	nonce := sealed[idEnd : idEnd+aead.NonceSize()]
	plain, err := aead.Open(nil, nonce, sealed[idEnd+aead.NonceSize():], append(sealed[:idEnd:idEnd], aad...))
	if err != nil {
		return nil, fmt.Errorf("%w with key %q: tampered with, copied from another row, or a different key under that ID", ErrSealed, id)
	}
	return plain, nil
}

// sealHeader is the authenticated header naming the key. New refuses
// empty IDs; longer IDs than a byte can count are refused there too.
func sealHeader(keyID string) []byte {
	h := make([]byte, 0, 2+len(keyID))
	return append(append(h, sealVersion, byte(len(keyID))), keyID...)
}

// AAD binds a sealed blob to its row: the table and the row's key
// columns, each length-prefixed so that no two different rows give the
// same bytes ("a","bc" and "ab","c" differ).
func AAD(table string, key ...string) []byte {
	var out []byte
	for _, part := range append([]string{table}, key...) {
		out = binary.AppendUvarint(out, uint64(len(part)))
		out = append(out, part...)
	}
	return out
}
