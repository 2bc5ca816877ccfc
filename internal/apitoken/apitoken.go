// Package apitoken is the format of a shop's API token: the bearer token
// with which its staff, its CLI and its own agents call bookonce's APIs.
//
// A token is Prefix, 26 random characters (crypto/rand.Text: 130 bits)
// and a 7-character checksum (CRC-32 of the part before it), all in the
// base32 alphabet A–Z, 2–7. The randomness makes guessing hopeless at any
// rate an API answers, so the failed-auth budget only has to stop noise;
// the prefix lets a log reader and a secret scanner recognise one; the
// checksum lets an API refuse a mistyped, truncated or made-up token
// before it looks anything up. The APIs store and compare only a token's
// SHA-256 (Digest), so a weak token listed as a digest would never be
// seen: Check, run before the lookup, is what refuses it.
package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Prefix starts every tenant API token (a service token starts with
// servicetoken.Prefix).
const Prefix = "bkapi_"

const (
	bodyLen     = 26 // len(rand.Text())
	checksumLen = 7  // base32 of 4 bytes, unpadded
	// Len is the length of every well-formed token.
	Len = len(Prefix) + bodyLen + checksumLen
)

// Dev is the development token of the demo tenant (`make run`, the
// tests). It is published in this repository, so a process reachable
// from other hosts refuses it (config.CheckSecrets).
const Dev = "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI"

// ErrMalformed is wrapped by every error of Check.
var ErrMalformed = errors.New("not a bookonce API token")

var encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// New mints a token.
func New() string {
	return withChecksum(rand.Text())
}

// withChecksum completes a body into a token.
func withChecksum(body string) string {
	return Prefix + body + checksum(Prefix+body)
}

func checksum(s string) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc32.ChecksumIEEE([]byte(s)))
	return encoding.EncodeToString(b[:])
}

// Check says why tok is not a well-formed token, nil if it is. The errors
// never repeat the token.
func Check(tok string) error {
	switch {
	case !strings.HasPrefix(tok, Prefix):
		return fmt.Errorf("%w: it does not begin with %s (mint one with `starter tenants token`)", ErrMalformed, Prefix)
	case len(tok) != Len:
		return fmt.Errorf("%w: it has %d characters, not %d (truncated or padded?)", ErrMalformed, len(tok), Len)
	case strings.Trim(tok[len(Prefix):], "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "":
		return fmt.Errorf("%w: after %s only A–Z and 2–7 may follow", ErrMalformed, Prefix)
	case checksum(tok[:Len-checksumLen]) != tok[Len-checksumLen:]:
		return fmt.Errorf("%w: its checksum does not match (mistyped?)", ErrMalformed)
	}
	return nil
}

// Digest is the hex SHA-256 of a token, as a tenant's api_token_sha256
// lists it.
func Digest(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}
