package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/postgres"
)

// TestClusterRecoversFromImmediateShutdown proves what the chaos drill's
// PostgreSQL restart relies on: after `pg_ctl -m immediate stop` (no
// checkpoint) the cluster starts again on the same port, a committed row
// survives the WAL replay, and an open pool reconnects by itself.
func TestClusterRecoversFromImmediateShutdown(t *testing.T) {
	if !postgres.HaveBinaries() {
		t.Skip("no PostgreSQL server binaries installed (initdb, pg_ctl)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "bookonce-cluster-*")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c, err := postgres.StartCluster(ctx, filepath.Join(dir, "postgres"), []string{"max_connections=50"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	url, err := postgres.EnsureDatabase(ctx, c.AdminURL, "crash")
	require.NoError(t, err)
	pool, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, `CREATE TABLE committed (v int); INSERT INTO committed VALUES (42)`)
	require.NoError(t, err)
	port := c.Port

	require.NoError(t, c.Crash(ctx))
	require.Error(t, pool.Ping(ctx), "the server is down")
	require.NoError(t, c.Start(ctx))
	require.Equal(t, port, c.Port)

	var v int
	require.Eventually(t, func() bool {
		return pool.QueryRow(ctx, `SELECT v FROM committed`).Scan(&v) == nil
	}, 30*time.Second, 100*time.Millisecond, "the pool reconnects")
	require.Equal(t, 42, v)
	log, err := os.ReadFile(filepath.Join(c.Dir, "server.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), "was not properly shut down", "an immediate stop is a crash: the start replays the WAL")
}
