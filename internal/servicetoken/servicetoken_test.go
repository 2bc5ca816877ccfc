package servicetoken

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func minter(t *testing.T, label string, now time.Time) *Minter {
	t.Helper()
	seed := sha256.Sum256([]byte(label))
	m, err := NewMinter(seed[:])
	require.NoError(t, err)
	m.now = func() time.Time { return now }
	return m
}

func verifier(keys []ed25519.PublicKey, aud Audience, now time.Time, tenants ...string) *Verifier {
	v := NewVerifier(keys, aud, func(t string) bool {
		for _, k := range tenants {
			if k == t {
				return true
			}
		}
		return false
	})
	v.now = func() time.Time { return now }
	return v
}

// TestVerifierAcceptsOnlyCurrentTokensOfItsAudienceForKnownTenants: the
// attacks on a service token, each refused; the worker's own token, for
// a shop the registry knows, accepted.
func TestVerifierAcceptsOnlyCurrentTokensOfItsAudienceForKnownTenants(t *testing.T) {
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	worker := minter(t, "worker", now)
	other := minter(t, "someone else", now)
	good, err := worker.Mint("shop-a", Calendar)
	require.NoError(t, err)
	forPayments, err := worker.Mint("shop-a", Payments)
	require.NoError(t, err)
	forUnknown, err := worker.Mint("shop-z", Calendar)
	require.NoError(t, err)
	forged, err := other.Mint("shop-a", Calendar)
	require.NoError(t, err)
	// Another tenant's name under the worker's signature.
	head, sig, _ := strings.Cut(good, ".")
	swapped := Prefix + base64.RawURLEncoding.EncodeToString([]byte(`{"t":"shop-b","a":"calendar","x":`+
		strings.TrimSuffix(strings.SplitN(decode(t, head), `"x":`, 2)[1], "}")+`}`)) + "." + sig

	cases := []struct {
		name   string
		token  string
		at     time.Time
		tenant string // "" means refused
	}{
		{"the worker's token", good, now, "shop-a"},
		{"still inside its lifetime", good, now.Add(Lifetime), "shop-a"},
		{"expired", good, now.Add(Lifetime + skew), ""},
		{"minted for the other API", forPayments, now, ""},
		{"a tenant the registry does not know", forUnknown, now, ""},
		{"signed by another key", forged, now, ""},
		{"claims changed under the signature", swapped, now, ""},
		{"a tenant's own token", "bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI", now, ""},
		{"the prefix alone", Prefix, now, ""},
		{"no signature", head, now, ""},
		{"empty", "", now, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := verifier([]ed25519.PublicKey{worker.PublicKey()}, Calendar, tc.at, "shop-a", "shop-b")
			tenant, ok := v.Lookup(tc.token)
			require.Equal(t, tc.tenant != "", ok)
			require.Equal(t, tc.tenant, tenant)
		})
	}
}

// TestVerifierRefusesALongLivedToken: a token whose expiry lies beyond a
// service token's lifetime was not minted by a worker (or by one whose
// clock is far off): refused, so a leaked key cannot mint tokens for
// later.
func TestVerifierRefusesALongLivedToken(t *testing.T) {
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	m := minter(t, "worker", now.Add(time.Hour))
	tok, err := m.Mint("shop-a", Calendar)
	require.NoError(t, err)
	_, ok := verifier([]ed25519.PublicKey{m.PublicKey()}, Calendar, now, "shop-a").Lookup(tok)
	require.False(t, ok)
}

// TestVerifierTakesEveryKeyOfARotation: while a key is rotated the APIs
// list the old and the new public key, and both workers are served.
func TestVerifierTakesEveryKeyOfARotation(t *testing.T) {
	now := time.Now()
	old, next := minter(t, "old", now), minter(t, "new", now)
	keys, err := ParsePublicKeys(EncodeKey(old.PublicKey()) + ", " + hex.EncodeToString(next.PublicKey()))
	require.NoError(t, err)
	v := verifier(keys, Payments, now, "shop-a")
	for _, m := range []*Minter{old, next} {
		tok, err := m.Mint("shop-a", Payments)
		require.NoError(t, err)
		tenant, ok := v.Lookup(tok)
		require.True(t, ok)
		require.Equal(t, "shop-a", tenant)
	}
}

// TestParseKeysSaysWhatIsWrong: a bad key is refused at start with what a
// key looks like, never taken as something else.
func TestParseKeysSaysWhatIsWrong(t *testing.T) {
	seed := sha256.Sum256([]byte("x"))
	for _, s := range []string{EncodeKey(seed[:]), base64.StdEncoding.EncodeToString(seed[:]), hex.EncodeToString(seed[:])} {
		got, err := ParseSeed(s)
		require.NoError(t, err, s)
		require.Equal(t, seed[:], got)
	}
	for _, s := range []string{"", "short", hex.EncodeToString(seed[:16])} {
		_, err := ParseSeed(s)
		require.ErrorContains(t, err, "32 bytes in base64 or hex", "%q", s)
	}
	_, err := ParsePublicKeys(" , ")
	require.ErrorContains(t, err, "no service public key")
	_, err = ParsePublicKeys("abc")
	require.ErrorContains(t, err, "starter service-key prints it")
	_, err = NewMinter(seed[:16])
	require.Error(t, err)
}

func decode(t *testing.T, head string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(head, Prefix))
	require.NoError(t, err)
	return string(b)
}
