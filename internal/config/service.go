package config

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/bookonce/bookonce/internal/servicetoken"
)

// The worker's identity at the calendar and payment APIs (package
// servicetoken): the worker holds the private key, the APIs the public
// keys. The public keys are no secret, but the development pair's public
// key lets in anybody who holds the published seed, so an API reachable
// from other hosts refuses it like a secret.
const (
	SecretServiceKey        Secret = "BOOKONCE_SERVICE_KEY"
	SecretServicePublicKeys Secret = "BOOKONCE_SERVICE_PUBLIC_KEYS"
)

// service reads the worker's private key and the public keys the APIs
// accept. Unset, the key is servicetoken.DevSeed and the public keys are
// the configured key's own, so one process (make run) or a worker and
// APIs given the same BOOKONCE_SERVICE_KEY agree without more.
func (r *reader) service(c *Config) {
	c.ServiceKey = servicetoken.DevSeed[:]
	if v := r.get(string(SecretServiceKey), ""); v != "" {
		seed, err := servicetoken.ParseSeed(v)
		if err != nil {
			r.fail(fmt.Sprintf("%s: %v", SecretServiceKey, err))
		} else {
			c.ServiceKey = seed
		}
	}
	if v := r.get(string(SecretServicePublicKeys), ""); v != "" {
		keys, err := servicetoken.ParsePublicKeys(v)
		if err != nil {
			r.fail(fmt.Sprintf("%s: %v", SecretServicePublicKeys, err))
		}
		c.ServicePublicKeys = keys
	}
}

// seed is the configured seed, the development one for a Config built in
// code without one.
func (c Config) seed() []byte {
	if len(c.ServiceKey) == ed25519.SeedSize {
		return c.ServiceKey
	}
	return servicetoken.DevSeed[:]
}

// ServiceMinter mints the worker's service tokens.
func (c Config) ServiceMinter() *servicetoken.Minter {
	m, err := servicetoken.NewMinter(c.seed())
	if err != nil {
		panic(err) // unreachable: seed has the right length
	}
	return m
}

// ServiceVerifier accepts the worker's tokens for aud, for a tenant known
// reports (the tenants registry, so a shop applied while the API runs is
// served at once): signed by one of BOOKONCE_SERVICE_PUBLIC_KEYS, or by
// the configured key when none are listed.
func (c Config) ServiceVerifier(aud servicetoken.Audience, known func(tenant string) bool) *servicetoken.Verifier {
	return servicetoken.NewVerifier(c.publicKeys(), aud, known)
}

// publicKeys are the keys the APIs accept service tokens by: the
// configured ones, else the configured key's own.
func (c Config) publicKeys() []ed25519.PublicKey {
	if len(c.ServicePublicKeys) > 0 {
		return c.ServicePublicKeys
	}
	return []ed25519.PublicKey{c.ServiceMinter().PublicKey()}
}

// serviceProblem says what is wrong with the service key or the public
// keys when they are the published development ones.
func (c Config) serviceProblem(s Secret) string {
	dev := ed25519.NewKeyFromSeed(servicetoken.DevSeed[:]).Public().(ed25519.PublicKey)
	switch s {
	case SecretServiceKey:
		if bytes.Equal(c.seed(), servicetoken.DevSeed[:]) {
			return fmt.Sprintf("%s is the published development key, with which anybody could act for every tenant at the calendar and payment APIs: make one with `starter service-key` and give its public key to the APIs (%s)", s, SecretServicePublicKeys)
		}
	case SecretServicePublicKeys:
		if c.acceptsServiceKey(dev) {
			return fmt.Sprintf("%s accepts the published development key, with which anybody could act for every tenant: list the public key `starter service-key` printed for your worker's %s", s, SecretServiceKey)
		}
	}
	return ""
}

// acceptsServiceKey reports whether the APIs accept tokens signed by
// the key whose public half is pub.
func (c Config) acceptsServiceKey(pub ed25519.PublicKey) bool {
	for _, k := range c.publicKeys() {
		if k.Equal(pub) {
			return true
		}
	}
	return false
}
