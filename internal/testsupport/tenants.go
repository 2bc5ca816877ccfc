package testsupport

import (
	"context"
	_ "embed"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/config"
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

// The second tenant of TwoTenants: London Garage (English, its own
// number, catalogue, time zone, deposit and wording).
const (
	LondonTenant = "london"
	LondonToken  = "bkapi_LONDONGARAGETESTTOKEN22222T5EVU4A"
	LondonNumber = "+442071234567"
)

//go:embed tenants.london.yaml
var londonTenant []byte

// TwoTenants applies the demo tenant and London Garage to pool, and
// returns the worker's client-side credentials for both (set them as
// config.Config.APITokens before the APIs and the worker are built).
func TwoTenants(t testing.TB, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	f, err := tenants.Parse("tenants.yaml", append(append([]byte{}, deploy.DemoTenants...), londonTenant...))
	require.NoError(t, err)
	_, err = tenants.Apply(context.Background(), pool, f, tenants.ApplyOptions{})
	require.NoError(t, err)
	return map[string]string{config.DefaultAPIToken: "demo", LondonToken: LondonTenant}
}
