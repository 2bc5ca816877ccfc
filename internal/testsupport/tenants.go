package testsupport

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/tenants"
)

// Tenants loads the tenants registry of pool (the demo tenant of a
// testsupport.Database, plus whatever the test applied before). It is
// not reloaded in the background: a test that applies a file afterwards
// calls Reload.
func Tenants(t testing.TB, pool *pgxpool.Pool) *tenants.Registry {
	t.Helper()
	reg, err := tenants.LoadRegistry(context.Background(), pool, nil)
	require.NoError(t, err)
	return reg
}
