package testsupport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
)

// Config returns the dev configuration (as with no environment), for
// tests that assemble services the way the commands do.
func Config(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	return cfg
}
