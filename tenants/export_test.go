package tenants

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// NewProfileForTest builds a Profile from a configuration without a
// database.
func NewProfileForTest(t testing.TB, c Tenant) *Profile {
	t.Helper()
	p, err := newProfile(c)
	require.NoError(t, err)
	return p
}
