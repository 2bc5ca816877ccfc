// Package servicetoken is the worker's identity at the calendar and
// payment APIs. The worker calls them on behalf of a tenant; before, it
// did so with the tenant's own API token, so every worker held every
// shop's token and a shop added while the workers ran had no token in
// them (its bookings failed until a restart). Now the worker holds one
// private key and mints, per call, a short-lived token that names the
// tenant and the API it is for; the APIs hold only the public key and
// accept such a token for a tenant their registry knows. Adding, rotating
// or removing a shop's token touches no worker, and an API process that
// is broken into cannot mint.
//
// A token is "bksvc_" + base64url(claims) + "." + base64url(Ed25519
// signature over the part before the dot). Ed25519 comes with Go's
// standard library; the format needs nothing more.
package servicetoken

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Prefix starts every service token, so a log reader, a secret scanner
// and the APIs tell it from a tenant's token at a glance.
const Prefix = "bksvc_"

// Audience names the API a token is for: a token minted for the calendar
// is refused by the payment API and the other way round.
type Audience string

// The APIs the worker calls.
const (
	Calendar Audience = "calendar"
	Payments Audience = "payments"
)

// Lifetime is how long a minted token is accepted. The worker mints one
// per call, so a token only has to outlive one request and its retries by
// the HTTP client; a token that leaks is worthless minutes later.
const Lifetime = 2 * time.Minute

// skew is the clock difference between worker and API hosts tolerated in
// either direction.
const skew = 30 * time.Second

// DevSeed is the private key's seed when none is configured. It is
// published in this repository: a worker or an API reachable from other
// hosts refuses it (config.CheckSecrets), since anybody could mint with it.
var DevSeed = sha256.Sum256([]byte("bookonce-dev-service-key"))

// claims is what a token says.
type claims struct {
	Tenant   string   `json:"t"`
	Audience Audience `json:"a"`
	Expires  int64    `json:"x"` // Unix seconds
}

// Minter mints tokens with the worker's private key.
type Minter struct {
	key ed25519.PrivateKey
	now func() time.Time
}

// NewMinter returns a Minter for the private key of seed (32 bytes).
func NewMinter(seed []byte) (*Minter, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("a service key seed has %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	return &Minter{key: ed25519.NewKeyFromSeed(seed), now: time.Now}, nil
}

// Mint returns a token that lets its bearer act for tenant at aud for
// Lifetime.
func (m *Minter) Mint(tenant string, aud Audience) (string, error) {
	if tenant == "" {
		return "", errors.New("a service token names a tenant")
	}
	body, err := json.Marshal(claims{Tenant: tenant, Audience: aud, Expires: m.now().Add(Lifetime).Unix()})
	if err != nil {
		return "", err
	}
	signed := Prefix + base64.RawURLEncoding.EncodeToString(body)
	sig := ed25519.Sign(m.key, []byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// PublicKey is the public key the APIs verify this minter's tokens with.
func (m *Minter) PublicKey() ed25519.PublicKey { return m.key.Public().(ed25519.PublicKey) }

// Verifier accepts the tokens of one audience signed by any of its keys
// (more than one while a key is rotated) for a tenant known says exists.
type Verifier struct {
	keys  []ed25519.PublicKey
	aud   Audience
	known func(tenant string) bool
	now   func() time.Time
}

// NewVerifier returns a Verifier for the tokens of aud signed by one of
// keys; known reports whether a tenant exists now (the tenants registry,
// which picks up a shop applied while the process runs).
func NewVerifier(keys []ed25519.PublicKey, aud Audience, known func(tenant string) bool) *Verifier {
	return &Verifier{keys: keys, aud: aud, known: known, now: time.Now}
}

// Lookup returns the tenant a service token acts for, in the shape of
// web.TokenLookup; ok is false for anything but a valid, current token
// of this audience for a known tenant.
func (v *Verifier) Lookup(token string) (tenant string, ok bool) {
	c, err := v.verify(token)
	if err != nil {
		return "", false
	}
	return c.Tenant, true
}

// verify checks a token and says why it is refused.
func (v *Verifier) verify(token string) (claims, error) {
	signed, sigText, found := strings.Cut(token, ".")
	if !found || !strings.HasPrefix(signed, Prefix) {
		return claims{}, errors.New("not a service token")
	}
	sig, err := base64.RawURLEncoding.DecodeString(sigText)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return claims{}, errors.New("malformed signature")
	}
	if !v.signedByOneOf([]byte(signed), sig) {
		return claims{}, errors.New("not signed by a configured key")
	}
	body, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(signed, Prefix))
	if err != nil {
		return claims{}, errors.New("malformed claims")
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, errors.New("malformed claims")
	}
	now := v.now()
	expires := time.Unix(c.Expires, 0)
	switch {
	case c.Audience != v.aud:
		return claims{}, fmt.Errorf("minted for %q, not %q", c.Audience, v.aud)
	case !now.Before(expires.Add(skew)):
		return claims{}, errors.New("expired")
	case expires.After(now.Add(Lifetime + skew)):
		return claims{}, errors.New("lives longer than a service token may")
	case c.Tenant == "" || v.known == nil || !v.known(c.Tenant):
		return claims{}, fmt.Errorf("unknown tenant %q", c.Tenant)
	}
	return c, nil
}

func (v *Verifier) signedByOneOf(msg, sig []byte) bool {
	for _, k := range v.keys {
		if ed25519.Verify(k, msg, sig) {
			return true
		}
	}
	return false
}

// ParseSeed reads a private key seed as configured: 32 bytes in base64
// (standard or URL alphabet, padded or not) or in hex.
func ParseSeed(s string) ([]byte, error) {
	b, err := decodeKey(s, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("a service key is %d bytes in base64 or hex (starter service-key makes one): %w", ed25519.SeedSize, err)
	}
	return b, nil
}

// ParsePublicKeys reads a comma-separated list of public keys, each 32
// bytes in base64 or hex, as configured.
func ParsePublicKeys(s string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		b, err := decodeKey(part, ed25519.PublicKeySize)
		if err != nil {
			return nil, fmt.Errorf("a service public key is %d bytes in base64 or hex (starter service-key prints it): %w", ed25519.PublicKeySize, err)
		}
		keys = append(keys, ed25519.PublicKey(b))
	}
	if len(keys) == 0 {
		return nil, errors.New("no service public key")
	}
	return keys, nil
}

// EncodeKey writes a seed or public key as ParseSeed and ParsePublicKeys
// read it.
func EncodeKey(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func decodeKey(s string, size int) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == size {
			return b, nil
		}
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == size {
		return b, nil
	}
	return nil, fmt.Errorf("cannot read %d characters as %d bytes", len(s), size)
}
