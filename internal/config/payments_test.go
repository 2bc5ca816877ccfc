package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAuthoritativeLookup: our payment API's search is authoritative by
// default, Stripe's never (its index lags writes), whatever is claimed.
func TestAuthoritativeLookup(t *testing.T) {
	cases := []struct {
		value, url string
		want       bool
		wantErr    bool
	}{
		{"", "http://127.0.0.1:8082", true, false},
		{"", "http://payments:8082", true, false},
		{"", "https://api.stripe.com", false, false},
		{"", "", false, false},
		{"false", "http://127.0.0.1:8082", false, false},
		{"true", "https://api.stripe.com", false, true},
		{"maybe", "http://127.0.0.1:8082", false, true},
	}
	for _, tc := range cases {
		got, err := authoritativeLookup(tc.value, tc.url)
		require.Equal(t, tc.wantErr, err != nil, "%q %q: %v", tc.value, tc.url, err)
		require.Equal(t, tc.want, got, "%q %q", tc.value, tc.url)
	}
}
