package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestSettleDatabasesVacuumsAndCheckpoints checks what the soak does
// between a level's seeding and its load: where autovacuum is off the
// seeding's dead rows are vacuumed and the tables analysed, and a
// checkpoint writes what the seeding dirtied.
func TestSettleDatabasesVacuumsAndCheckpoints(t *testing.T) {
	ctx := context.Background()
	pool, url := testsupport.DatabaseURL(t)
	_, err := pool.Exec(ctx, `CREATE TABLE seeded (id int PRIMARY KEY, v text);
		INSERT INTO seeded SELECT g, 'x' FROM generate_series(1, 1000) g;
		DELETE FROM seeded WHERE id % 2 = 0`)
	require.NoError(t, err)
	var autovacuum string
	require.NoError(t, pool.QueryRow(ctx, `SHOW autovacuum`).Scan(&autovacuum))
	checkpoints := func() (n int64) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT checkpoints_req FROM pg_stat_bgwriter`).Scan(&n))
		return n
	}
	before := checkpoints()

	settleDatabases(t, url)

	if autovacuum == "off" {
		var vacuumed, analysed bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL
			FROM pg_stat_user_tables WHERE relname = 'seeded'`).Scan(&vacuumed, &analysed))
		require.True(t, vacuumed, "the seeding's dead rows are vacuumed")
		require.True(t, analysed, "the planner gets the seeded table's statistics")
	}
	var superuser bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&superuser))
	if superuser {
		require.Greater(t, checkpoints(), before, "a checkpoint wrote what the seeding dirtied")
	}
}
