package postgres_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/postgres"
)

// TestPrivateClusterWhenNothingAnswers proves the last discovery step: with
// no server on the local addresses, bookonce initialises and starts its own
// cluster from the installed binaries, creates the database, migrates it,
// and stops it again.
func TestPrivateClusterWhenNothingAnswers(t *testing.T) {
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			t.Skip("no PostgreSQL server binaries installed (initdb); the private-cluster path cannot run here")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "bookonce-private-*")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	url, stop, err := postgres.Discover(ctx, postgres.Options{DataDir: dir, LocalAddrs: []string{"postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1"}})
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	require.FileExists(t, filepath.Join(dir, "postgres", "PG_VERSION"))

	pool, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM goose_db_version WHERE version_id >= 9 AND is_applied`).Scan(&n))
	require.Positive(t, n, "migrations ran up to the tenants table")
}

func TestEnsureDatabaseIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := postgres.FindServer(ctx, postgres.Options{DataDir: os.TempDir() + "/bookonce-test"})
	require.NoError(t, err)
	name := "bookonce_ensure_test"
	for range 2 {
		u, err := postgres.EnsureDatabase(ctx, srv.AdminURL, name)
		require.NoError(t, err)
		require.Contains(t, u, "/"+name)
	}
	conn, err := pgx.Connect(ctx, srv.AdminURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE "+name)
	require.NoError(t, err)
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := postgres.FindServer(ctx, postgres.Options{DataDir: os.TempDir() + "/bookonce-test"})
	require.NoError(t, err)
	u, err := postgres.EnsureDatabase(ctx, srv.AdminURL, "bookonce_migrate_test")
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), srv.AdminURL)
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP DATABASE bookonce_migrate_test WITH (FORCE)")
			conn.Close(context.Background())
		}
	})
	for range 2 {
		pool, err := postgres.Open(ctx, u)
		require.NoError(t, err)
		pool.Close()
	}
}
