package testsupport

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// Refusal makes PostgreSQL refuse one kind of write to a table, as a
// database that fails over does for the writer, and counts each refused
// attempt.
type Refusal struct {
	t           testing.TB
	pool        *pgxpool.Pool
	name, table string
}

// Refuse installs a trigger name on table that raises an error for every
// row of event (e.g. "BEFORE INSERT" with when "NEW.kind =
// 'confirmation'"; when "" refuses every row), counting each refusal in a
// sequence, which a rollback keeps. Lift ends it.
func Refuse(t testing.TB, pool *pgxpool.Pool, name, event, table, when string) *Refusal {
	t.Helper()
	filter := ""
	if when != "" {
		filter = " WHEN (" + when + ")"
	}
	_, err := pool.Exec(context.Background(), `
CREATE SEQUENCE `+name+`_attempts;
CREATE FUNCTION `+name+`() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM nextval('`+name+`_attempts');
	RAISE EXCEPTION '`+name+`: refused by the test';
END $$;
CREATE TRIGGER `+name+` `+event+` ON `+table+` FOR EACH ROW`+filter+` EXECUTE FUNCTION `+name+`();`)
	require.NoError(t, err)
	return &Refusal{t: t, pool: pool, name: name, table: table}
}

// Attempts is how many writes were refused so far.
func (r *Refusal) Attempts() int {
	r.t.Helper()
	var n int
	require.NoError(r.t, r.pool.QueryRow(context.Background(),
		`SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM `+r.name+`_attempts`).Scan(&n))
	return n
}

// Lift lets the writes through again.
func (r *Refusal) Lift() {
	r.t.Helper()
	_, err := r.pool.Exec(context.Background(), `DROP TRIGGER `+r.name+` ON `+r.table)
	require.NoError(r.t, err)
}
