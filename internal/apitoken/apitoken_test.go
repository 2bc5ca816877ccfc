package apitoken_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/apitoken"
)

func TestNewTokensAreWellFormedAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := apitoken.New()
		require.NoError(t, apitoken.Check(tok))
		require.Len(t, tok, apitoken.Len)
		require.False(t, seen[tok], "a token came twice")
		seen[tok] = true
	}
	require.NoError(t, apitoken.Check(apitoken.Dev))
}

// Check refuses everything that is not a minted token, saying why without
// repeating the token.
func TestCheckRefusesWhatWasNotMinted(t *testing.T) {
	tok := apitoken.New()
	dev := apitoken.Dev // bkapi_DEVELOPMENT…: the 7th and 8th characters differ
	swapped := dev[:6] + dev[7:8] + dev[6:7] + dev[8:]
	cases := []struct{ name, token, why string }{
		{"empty", "", "does not begin with bkapi_"},
		{"a hand-made secret", "dev-token", "does not begin with bkapi_"},
		{"a long random hex", strings.Repeat("ab", 32), "does not begin with bkapi_"},
		{"a service token", "bksvc_eyJ0IjoiZGVtbyJ9.c2ln", "does not begin with bkapi_"},
		{"truncated", tok[:apitoken.Len-1], "has 38 characters, not 39"},
		{"padded", tok + "A", "has 40 characters, not 39"},
		{"lower case", strings.ToLower(tok[:6]) + strings.ToLower(tok[6:]), "only A–Z and 2–7"},
		{"a digit outside base32", tok[:7] + "1" + tok[8:], "only A–Z and 2–7"},
		{"one character changed", tok[:7] + flip(tok[7]) + tok[8:], "checksum does not match"},
		{"two characters swapped", swapped, "checksum does not match"},
		{"made up with the right shape", apitoken.Prefix + strings.Repeat("A", apitoken.Len-len(apitoken.Prefix)), "checksum does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := apitoken.Check(c.token)
			require.ErrorIs(t, err, apitoken.ErrMalformed)
			require.ErrorContains(t, err, c.why)
			if c.token != "" {
				require.NotContains(t, err.Error(), c.token)
			}
		})
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

func TestDigestIsTheHexSHA256(t *testing.T) {
	// printf %s bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI | sha256sum
	require.Equal(t, "b7c6c853974f48cf9cd27e2c9675eb5f8822c7f263b53d5c57c4c00bddc71246", apitoken.Digest(apitoken.Dev))
}
