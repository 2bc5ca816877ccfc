// Package payloadcrypt encrypts Temporal payloads (workflow inputs and
// results, activity arguments, signals, updates, memos and failure texts)
// with AES-256-GCM before they leave the process, so phone numbers and
// message texts are ciphertext to anyone with Temporal Web UI or gRPC
// access but without the keys.
//
// A Codec holds a key set: one current key encrypts, every key decrypts,
// so keys rotate by adding a new current key and keeping the old ones
// until no history that needs them is retained. Each encrypted payload
// names its key in the metadata ("encryption-key-id") and carries a fresh
// random nonce; the plaintext is the original payload, proto-marshalled,
// so its own encoding and metadata come back unchanged. Payloads without
// the encrypted encoding pass through Decode untouched: histories recorded
// before encryption was switched on keep replaying.
//
// The same key set seals personal data at rest in bookonce's own tables
// (Seal, Open): stored idempotency responses, inbox payloads and outbox
// texts, each blob bound to its row.
package payloadcrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Metadata of an encrypted payload.
const (
	// MetadataEncoding is the standard payload metadata key of the encoding.
	MetadataEncoding = converter.MetadataEncoding
	// EncodingEncrypted marks a payload this codec encrypted.
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID names the key that encrypted the payload.
	MetadataKeyID = "encryption-key-id"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// ErrUnknownKey is returned for a payload encrypted with a key the set
// does not hold (a key removed too early, or another deployment's data).
var ErrUnknownKey = errors.New("payload encrypted with a key that is not configured")

// Key is one named AES-256 key.
type Key struct {
	ID     string
	Secret []byte
}

// Codec is the encrypting converter.PayloadCodec.
type Codec struct {
	current string
	aeads   map[string]cipher.AEAD
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec over keys; the first key is the current one, which
// encrypts. IDs must be unique and non-empty, secrets 32 bytes.
func New(keys []Key) (*Codec, error) {
	if len(keys) == 0 {
		return nil, errors.New("payload encryption needs at least one key")
	}
	c := &Codec{current: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		if k.ID == "" {
			return nil, errors.New("a payload key has an empty ID")
		}
		if len(k.ID) > maxKeyIDLen { // a sealed blob's header counts it in one byte
			return nil, fmt.Errorf("payload key ID %.16q… is longer than %d bytes", k.ID, maxKeyIDLen)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("payload key %q is %d bytes; AES-256 needs %d", k.ID, len(k.Secret), KeySize)
		}
		if _, dup := c.aeads[k.ID]; dup {
			return nil, fmt.Errorf("payload key %q is listed twice", k.ID)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("payload key %q: %w", k.ID, err)
		}
		if c.aeads[k.ID], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("payload key %q: %w", k.ID, err)
		}
	}
	return c, nil
}

// CurrentKeyID is the ID of the key new payloads are encrypted with.
func (c *Codec) CurrentKeyID() string { return c.current }

// Encode encrypts every payload with the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := c.aeads[c.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return payloads, fmt.Errorf("marshal payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize())
		_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				MetadataEncoding: []byte(EncodingEncrypted),
				MetadataKeyID:    []byte(c.current),
			},
			// The key ID is authenticated too, so a payload cannot be
			// relabelled to another key.
			Data: aead.Seal(nonce, nonce, plain, []byte(c.current)),
		}
	}
	return out, nil
}

// Decode decrypts the encrypted payloads and passes the others through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.aeads[id]
		if !ok {
			return payloads, fmt.Errorf("%w: key ID %q (configured: BOOKONCE_PAYLOAD_KEYS)", ErrUnknownKey, id)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize() {
			return payloads, fmt.Errorf("encrypted payload (key %q) is too short", id)
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return payloads, fmt.Errorf("decrypt payload with key %q: %w (tampered with, or a different key under that ID)", id, err)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return payloads, fmt.Errorf("unmarshal decrypted payload: %w", err)
		}
		out[i] = &orig
	}
	return out, nil
}

// DataConverter is the SDK's default data converter with c encrypting
// every payload it produces.
func DataConverter(c *Codec) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encodes failures' messages and stack traces as a
// payload through dc, so error texts (which may quote a phone number or
// a message) are encrypted too; failures recorded in clear still decode.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}
