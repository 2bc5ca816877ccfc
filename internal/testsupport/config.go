package testsupport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/config"
)

// Config returns the dev configuration (as with no environment), for
// tests that assemble services the way the commands do. Conversations pay
// with the lab's test card (DEPOSIT_MODE=card), authorised at once, as the
// tests written before payment links expect; a test of links sets
// DepositMode to config.DepositLink itself.
func Config(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.Load(func(k string) (string, bool) {
		if k == "DEPOSIT_MODE" {
			return string(config.DepositCard), true
		}
		return "", false
	})
	require.NoError(t, err)
	return cfg
}
