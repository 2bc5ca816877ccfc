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
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/bookonce/bookonce/reference"
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
//
// Payloads of a tenant's workflows (the SDK names the workflow in the
// serialization context, and every bookonce workflow ID names its tenant,
// package reference) are encrypted with the tenant's own data key,
// derived from the current master key with HKDF-SHA256 and the tenant as
// info; its key ID is TenantKeyID(master, tenant). Payloads without a
// tenant (the reconciler, clients that pass no context) keep the master
// key. Decode takes the key from the payload's key ID, so payloads of
// either kind, and those recorded before tenant keys, decode.
type Codec struct {
	current string
	aeads   map[string]cipher.AEAD
	secrets map[string][]byte
	derived *sync.Map // tenant key ID -> cipher.AEAD
}

var (
	_ converter.PayloadCodec                         = (*Codec)(nil)
	_ converter.PayloadCodecWithSerializationContext = (*Codec)(nil)
)

// tenantKeySep separates the master key ID from the tenant in a tenant
// key ID; master key IDs may not contain it (nor may tenants, which
// workflow IDs separate with it too).
const tenantKeySep = ":"

// TenantKeyID is the key ID of tenant's data key derived from the master
// key masterID: "<masterID>:<tenant>".
func TenantKeyID(masterID, tenant string) string { return masterID + tenantKeySep + tenant }

// TenantOfKeyID is the tenant whose data key keyID names; false for a
// master key ID.
func TenantOfKeyID(keyID string) (string, bool) {
	_, tenant, ok := strings.Cut(keyID, tenantKeySep)
	return tenant, ok && tenant != ""
}

// New returns a codec over keys; the first key is the current one, which
// encrypts. IDs must be unique and non-empty, secrets 32 bytes.
func New(keys []Key) (*Codec, error) {
	if len(keys) == 0 {
		return nil, errors.New("payload encryption needs at least one key")
	}
	c := &Codec{current: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys)), secrets: make(map[string][]byte, len(keys)), derived: &sync.Map{}}
	for _, k := range keys {
		if k.ID == "" {
			return nil, errors.New("a payload key has an empty ID")
		}
		if strings.Contains(k.ID, tenantKeySep) {
			return nil, fmt.Errorf("payload key ID %.16q contains %q, which names tenant keys", k.ID, tenantKeySep)
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
		c.secrets[k.ID] = append([]byte(nil), k.Secret...)
	}
	return c, nil
}

// aead is the cipher of keyID: a master key, or a tenant's key derived
// from one (cached).
func (c *Codec) aead(keyID string) (cipher.AEAD, error) {
	if a, ok := c.aeads[keyID]; ok {
		return a, nil
	}
	if a, ok := c.derived.Load(keyID); ok {
		return a.(cipher.AEAD), nil
	}
	master, tenant, ok := strings.Cut(keyID, tenantKeySep)
	secret, known := c.secrets[master]
	if !ok || !known || tenant == "" {
		return nil, fmt.Errorf("%w: key ID %q (configured: %s)", ErrUnknownKey, keyID, EnvKeys)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "bookonce payload key for tenant "+tenant, KeySize)
	if err != nil {
		return nil, fmt.Errorf("derive the key of %q: %w", keyID, err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("payload key %q: %w", keyID, err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("payload key %q: %w", keyID, err)
	}
	actual, _ := c.derived.LoadOrStore(keyID, a)
	return actual.(cipher.AEAD), nil
}

// WithSerializationContext is the codec for the payloads of one workflow
// or activity: the tenant its workflow ID names encrypts with its own key;
// a workflow without a tenant gets c (the master key).
func (c *Codec) WithSerializationContext(sc converter.SerializationContext) converter.PayloadCodec {
	var id string
	switch s := sc.(type) {
	case converter.WorkflowSerializationContext:
		id = s.WorkflowID
	case converter.ActivitySerializationContext:
		id = s.WorkflowID
	}
	if tenant, ok := reference.TenantOf(id); ok && !strings.Contains(tenant, tenantKeySep) {
		return c.ForTenant(tenant)
	}
	return c
}

// ForTenant is the codec that encrypts with tenant's data key and decodes
// every payload c decodes.
func (c *Codec) ForTenant(tenant string) converter.PayloadCodec {
	return tenantCodec{c: c, keyID: TenantKeyID(c.current, tenant)}
}

// TenantView is the codec server's codec for one tenant's staff: it
// encrypts with the tenant's data key and decodes only payloads under one
// of the tenant's keys; every other encrypted payload (another tenant's,
// or under a master key, which may be anybody's) is returned as it came.
func (c *Codec) TenantView(tenant string) converter.PayloadCodec {
	return tenantCodec{c: c, keyID: TenantKeyID(c.current, tenant), tenant: tenant, own: true}
}

type tenantCodec struct {
	c      *Codec
	keyID  string
	tenant string
	own    bool
}

func (t tenantCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	return t.c.encode(t.keyID, payloads)
}

func (t tenantCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if !t.own {
		return t.c.Decode(payloads)
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		out[i] = p
		if tenant, ok := TenantOfKeyID(string(p.GetMetadata()[MetadataKeyID])); !ok || tenant != t.tenant {
			continue // not encrypted, or not this tenant's: as it came
		}
		dec, err := t.c.Decode([]*commonpb.Payload{p})
		if err != nil {
			return payloads, err
		}
		out[i] = dec[0]
	}
	return out, nil
}

// CurrentKeyID is the ID of the key new payloads are encrypted with.
func (c *Codec) CurrentKeyID() string { return c.current }

// Encode encrypts every payload with the current master key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	return c.encode(c.current, payloads)
}

// encode encrypts every payload with the key keyID.
func (c *Codec) encode(keyID string, payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead, err := c.aead(keyID)
	if err != nil {
		return payloads, err
	}
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
				MetadataKeyID:    []byte(keyID),
			},
			// The key ID is authenticated too, so a payload cannot be
			// relabelled to another key.
			Data: aead.Seal(nonce, nonce, plain, []byte(keyID)),
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
		aead, err := c.aead(id)
		if err != nil {
			return payloads, err
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
// In a workflow's or activity's serialization context it encodes through
// dc in that context (a tenant's failures under the tenant's key).
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return failureConverter{
		FailureConverter: temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true}),
		dc:               dc,
	}
}

type failureConverter struct {
	converter.FailureConverter
	dc converter.DataConverter
}

func (f failureConverter) WithSerializationContext(sc converter.SerializationContext) converter.FailureConverter {
	return FailureConverter(converter.WithDataConverterSerializationContext(f.dc, sc))
}
