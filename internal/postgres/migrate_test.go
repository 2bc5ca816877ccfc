package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/postgres"
)

// TestConcurrentMigratorsApplyEachMigrationOnce: three processes that
// start together on a fresh database (the gateway, the worker and an API
// of one deployment) all migrate without an error, and the advisory lock
// lets each migration be applied exactly once (one row per version in
// goose's version table). Several rounds, as a race shows itself rarely.
func TestConcurrentMigratorsApplyEachMigrationOnce(t *testing.T) {
	const migrators, rounds = 3, 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := postgres.FindServer(ctx, postgres.Options{DataDir: os.TempDir() + "/bookonce-test"})
	require.NoError(t, err)
	files, err := os.ReadDir("migrations")
	require.NoError(t, err)

	for round := range rounds {
		u := freshDatabase(t, ctx, srv.AdminURL)
		start := make(chan struct{})
		errs := make([]error, migrators)
		var wg sync.WaitGroup
		for i := range migrators {
			wg.Go(func() {
				<-start
				pool, err := postgres.Open(ctx, u) // its own pool, as a process has
				if err == nil {
					pool.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, migrator %d", round, i)
		}

		conn, err := pgx.Connect(ctx, u)
		require.NoError(t, err)
		rows, err := conn.Query(ctx, `SELECT version_id, count(*) FROM goose_db_version WHERE version_id > 0 GROUP BY version_id ORDER BY version_id`)
		require.NoError(t, err)
		applied, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]int64, error) {
			var v [2]int64
			return v, r.Scan(&v[0], &v[1])
		})
		require.NoError(t, err)
		require.NoError(t, conn.Close(ctx))
		require.Len(t, applied, len(files), "round %d: every migration applied", round)
		for _, a := range applied {
			require.Equal(t, int64(1), a[1], "round %d: migration %d applied once", round, a[0])
		}
	}
}

// freshDatabase creates an empty database, dropped when the test ends.
func freshDatabase(t *testing.T, ctx context.Context, adminURL string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	name := "bookonce_t_migrators_" + strings.ToLower(hex.EncodeToString(b))
	u, err := postgres.EnsureDatabase(ctx, adminURL, name)
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), adminURL)
		if err != nil {
			t.Logf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("drop %s: %v", name, err)
		}
	})
	return u
}
