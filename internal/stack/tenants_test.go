package stack_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestLoadTenantsRefusesTheDevTokenWhenReachable: the demo tenant lists the
// digest of the development token, so a process reachable from other
// hosts refuses to serve from it (unless BOOKONCE_ALLOW_DEV_SECRETS=1);
// on loopback (make run, the tests) it serves.
func TestLoadTenantsRefusesTheDevTokenWhenReachable(t *testing.T) {
	pool := testsupport.Database(t) // with the demo tenant
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

	cfg := testsupport.Config(t)
	_, err := stack.LoadTenants(ctx, cfg, pool, log)
	require.NoError(t, err, "loopback")

	cfg.GatewayListen = "0.0.0.0:8080"
	_, err = stack.LoadTenants(ctx, cfg, pool, log)
	require.ErrorContains(t, err, "api_token_sha256")
	require.ErrorContains(t, err, "GATEWAY_LISTEN=0.0.0.0:8080")
	require.ErrorContains(t, err, "BOOKONCE_ALLOW_DEV_SECRETS=1")
}
