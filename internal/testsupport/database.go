package testsupport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/postgres"
	"github.com/bookonce/bookonce/tenants"
)

var (
	serverOnce sync.Once
	server     postgres.Server
	serverErr  error
)

// adminURL finds the PostgreSQL server tests use: BOOKONCE_TEST_DATABASE_URL
// (a maintenance database URL), else the same discovery as the app, with a
// private cluster under the system temp dir when nothing answers.
func adminURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() {
		if u := os.Getenv("BOOKONCE_TEST_DATABASE_URL"); u != "" {
			server = postgres.Server{AdminURL: u, Stop: func() error { return nil }}
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

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// Database creates a fresh, migrated database with the demo tenant
// (deploy/tenants.demo.yaml) for this test and returns a pool on it. The database is dropped when the test ends, so parallel
// packages and reruns never see each other's rows.
func Database(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := DatabaseURL(t)
	return pool
}

// DatabaseURL is Database that also returns the connection URL, for code
// under test that opens its own pool. The database is a copy of the run's
// template (migrated, demo tenants applied; see template.go), which costs
// a file copy instead of seventeen migrations; it is then opened as the
// app opens one, so a template that missed a change is brought up to date.
func DatabaseURL(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	admin := adminURL(t)
	tmpl := templateDatabase(t, admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	name := "bookonce_t_" + unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name += "_" + hex.EncodeToString(suffix)

	conn, err := pgx.Connect(ctx, admin)
	require.NoError(t, err, "connect to the test PostgreSQL server")
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize())
	conn.Close(ctx)
	require.NoError(t, err, "create test database")
	t.Cleanup(func() { dropDatabase(t, admin, name) })

	dbURL, err := postgres.WithDatabase(admin, name)
	require.NoError(t, err)
	pool, err := postgres.Open(ctx, dbURL)
	require.NoError(t, err, "open and migrate test database")
	t.Cleanup(pool.Close)
	_, err = deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{})
	require.NoError(t, err, "apply the demo tenants file")
	return pool, dbURL
}

// dropDatabase drops a test's database; a failure is only logged, since
// the test's result does not depend on it.
func dropDatabase(t testing.TB, admin, name string) {
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
}

// TemporalDatabases names two databases, name and name+"_visibility",
// for a Temporal server on PostgreSQL (devserver.Postgres) to create on
// the test server at adminURL; both are dropped when the test ends.
func TemporalDatabases(t testing.TB) (admin, name string) {
	t.Helper()
	admin = adminURL(t)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name = "temporal_t_" + hex.EncodeToString(suffix)
	t.Cleanup(func() {
		dropDatabase(t, admin, name)
		dropDatabase(t, admin, name+"_visibility")
	})
	return admin, name
}
