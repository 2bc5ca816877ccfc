// Package customerid names a customer in places Temporal shows to anyone
// with Web UI or gRPC access (workflow IDs, search attributes) without the
// phone number: a keyed hash of the number, per tenant, that only a holder
// of the configured secret can compute from a number and nobody can turn
// back into one. Payloads are encrypted by the payload codec; IDs and
// search attributes are not, which is why they carry this key instead.
package customerid

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/bookonce/bookonce/internal/mask"
)

// Var names the environment variable with the master secret.
const Var = "BOOKONCE_CUSTOMER_ID_KEY"

// DevSecret is the master secret used when Var is unset. It is published
// in this repository: a process reachable from other hosts refuses it
// (config.CheckSecrets), because with it anybody can test a guessed number
// against a workflow ID.
const DevSecret = "bookonce-dev-customer-id-key"

// MinSecretLength is the shortest master secret accepted: a short one
// would make the keys as guessable as the numbers.
const MinSecretLength = 16

// KeyLength is the length of a Key: 16 bytes of the HMAC (128 bits) in
// lowercase base32, short enough for IDs, far beyond collisions.
const KeyLength = 26

// Key is a customer's keyed hash within one tenant.
type Key string

// derivation labels the tenant secrets, so the master secret could key
// something else one day without the two ever meeting.
const derivation = "bookonce customer-id v1\x00"

var encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// e164 is the form the gateway normalises caller IDs to.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// ErrNotE164 is returned for a number that is not in E.164 form.
var ErrNotE164 = errors.New("not an E.164 phone number (a plus, the country code and the number, e.g. +4915112345678)")

// Keyer computes customer keys from one master secret.
type Keyer struct {
	master []byte
}

// New returns a Keyer for the master secret.
func New(master string) (*Keyer, error) {
	if len(master) < MinSecretLength {
		return nil, fmt.Errorf("%s must have at least %d characters (openssl rand -hex 32)", Var, MinSecretLength)
	}
	return &Keyer{master: []byte(master)}, nil
}

// Dev is the Keyer of DevSecret, for tests and local tools.
func Dev() *Keyer {
	return &Keyer{master: []byte(DevSecret)}
}

// Key is HMAC-SHA256(tenant secret, number), the tenant secret being
// HMAC-SHA256(master, tenant): the same number has unrelated keys in two
// tenants, so keys cannot be joined across tenants.
func (k *Keyer) Key(tenant, number string) (Key, error) {
	if !e164.MatchString(number) {
		return "", fmt.Errorf("customer %q: %w", mask.Phones(number), ErrNotE164)
	}
	if tenant == "" {
		return "", errors.New("customer key: no tenant")
	}
	m := hmac.New(sha256.New, k.tenantSecret(tenant))
	m.Write([]byte(number))
	return Key(strings.ToLower(encoding.EncodeToString(m.Sum(nil)[:16]))), nil
}

func (k *Keyer) tenantSecret(tenant string) []byte {
	m := hmac.New(sha256.New, k.master)
	m.Write([]byte(derivation + tenant))
	return m.Sum(nil)
}

// Valid reports whether s has the form of a Key.
func Valid(s string) bool {
	if len(s) != KeyLength {
		return false
	}
	_, err := encoding.DecodeString(strings.ToUpper(s))
	return err == nil
}
