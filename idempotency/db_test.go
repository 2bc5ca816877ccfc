package idempotency_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/postgres"
)

// testDatabase is testsupport.Database without its imports: testsupport
// also starts Temporal and links the whole stack (workflows, channels, ...),
// which made this package's tests (and its fuzz build) slow to link and
// broken whenever an unrelated package was. Same discovery, same contract:
// a fresh migrated database per test, dropped afterwards.
func testDatabase(t *testing.T) *pgxpool.Pool {
	t.Helper()
	admin := adminURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "bookonce_t_idempotency_" + hex.EncodeToString(suffix)

	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err, "connect to the test PostgreSQL server")
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	_ = conn.Close(ctx)
	require.NoError(t, err, "create test database")
	dbURL, err := postgres.WithDatabase(admin, name)
	require.NoError(t, err)
	pool, err := postgres.Open(ctx, dbURL)
	require.NoError(t, err, "open and migrate test database")

	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Logf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	return pool
}

var (
	serverOnce sync.Once
	server     postgres.Server
	serverErr  error
)

// adminURL finds the server as testsupport does: BOOKONCE_TEST_DATABASE_URL,
// else the app's discovery with a private cluster under the temp dir.
func adminURL(t *testing.T) string {
	t.Helper()
	serverOnce.Do(func() {
		if u := os.Getenv("BOOKONCE_TEST_DATABASE_URL"); u != "" {
			server = postgres.Server{AdminURL: u}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		server, serverErr = postgres.FindServer(ctx, postgres.Options{DataDir: os.TempDir() + "/bookonce-test"})
	})
	if serverErr != nil {
		t.Fatalf("tests need PostgreSQL: %v", serverErr)
	}
	return server.AdminURL
}
