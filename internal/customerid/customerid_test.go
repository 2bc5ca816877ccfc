package customerid_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/customerid"
)

const number = "+4915112345678"

func keyer(t *testing.T, master string) *customerid.Keyer {
	t.Helper()
	k, err := customerid.New(master)
	require.NoError(t, err)
	return k
}

// TestKeyIsShortStableAndCarriesNoDigits: a key is 26 lowercase base32
// characters, the same for the same tenant and number, and shows no part
// of the number.
func TestKeyIsShortStableAndCarriesNoDigits(t *testing.T) {
	k := keyer(t, "0123456789abcdef0123456789abcdef")
	key, err := k.Key("demo", number)
	require.NoError(t, err)
	require.Len(t, string(key), customerid.KeyLength)
	require.Regexp(t, `^[a-z2-7]{26}$`, string(key))
	require.True(t, customerid.Valid(string(key)))
	again, err := k.Key("demo", number)
	require.NoError(t, err)
	require.Equal(t, key, again)
	require.NotContains(t, string(key), "12345678")
}

// TestKeysDifferBySecretTenantAndNumber: the same number has unrelated
// keys in two tenants and under two master secrets, so keys can be joined
// neither across shops nor without the secret.
func TestKeysDifferBySecretTenantAndNumber(t *testing.T) {
	base := keyer(t, "0123456789abcdef0123456789abcdef")
	ref, err := base.Key("demo", number)
	require.NoError(t, err)
	cases := []struct {
		name           string
		k              *customerid.Keyer
		tenant, number string
	}{
		{"other tenant", base, "t2", number},
		{"other number", base, "demo", "+4915112345679"},
		{"other master secret", keyer(t, "fedcba9876543210fedcba9876543210"), "demo", number},
		{"development secret", customerid.Dev(), "demo", number},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := c.k.Key(c.tenant, c.number)
			require.NoError(t, err)
			require.NotEqual(t, ref, key)
		})
	}
}

// TestKeyRefusesWhatIsNotE164: only normalised numbers are keyed (the
// gateway normalises caller IDs); the error masks what it quotes.
func TestKeyRefusesWhatIsNotE164(t *testing.T) {
	for _, bad := range []string{"", "015112345678", "whatsapp:+4915112345678", "+49 151 12345678", "+0123456789", "+49"} {
		t.Run(bad, func(t *testing.T) {
			_, err := customerid.Dev().Key("demo", bad)
			require.ErrorIs(t, err, customerid.ErrNotE164)
		})
	}
	_, err := customerid.Dev().Key("", number)
	require.ErrorContains(t, err, "no tenant")
}

// TestNewRefusesShortSecrets: a short master secret is refused with what
// to do instead.
func TestNewRefusesShortSecrets(t *testing.T) {
	_, err := customerid.New(strings.Repeat("x", customerid.MinSecretLength-1))
	require.ErrorContains(t, err, "openssl rand -hex 32")
	_, err = customerid.New(strings.Repeat("x", customerid.MinSecretLength))
	require.NoError(t, err)
}

func TestMaskedKeepsCountryCodeAndLastDigits(t *testing.T) {
}
