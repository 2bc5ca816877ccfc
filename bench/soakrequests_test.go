package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// serverRequests is the Temporal server's count of requests so far, by
// kind, service and operation: the calls its services took
// (service_requests) and the ones they made to the store
// (persistence_requests).
type serverRequests map[string]float64

// perBooking lists what the server was asked between r0 and r, per
// booking of n, the most first.
func (r serverRequests) perBooking(r0 serverRequests, n int) string {
	type line struct {
		what string
		per  float64
	}
	var lines []line
	for what, v := range r {
		if d := v - r0[what]; d > 0 {
			lines = append(lines, line{what, d / float64(n)})
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].per > lines[j].per })
	var b strings.Builder
	fmt.Fprintf(&b, "Temporal server requests per new booking (%d bookings, with their window's changes and reminders)\n", n)
	for _, l := range lines {
		fmt.Fprintf(&b, "%9.2f  %s\n", l.per, l.what)
	}
	return b.String()
}

// statements reads PostgreSQL's per-statement counters where the server
// has pg_stat_statements loaded (shared_preload_libraries); elsewhere
// ok is false and the soak goes on without them.
type statements struct {
	pool *pgxpool.Pool
	ok   bool
}

// resetStatements zeroes the counters when SOAK_PROFILE_DIR asks for a
// level's reports, or says why there are none.
func resetStatements(t *testing.T, pool *pgxpool.Pool) statements {
	if os.Getenv("SOAK_PROFILE_DIR") == "" {
		return statements{}
	}
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	if err == nil {
		_, err = pool.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	}
	if err != nil {
		t.Logf("soak: no statement counters (%v)", err)
		return statements{}
	}
	return statements{pool: pool, ok: true}
}

// perBooking lists the statements of every database on the server since
// the reset, the most executor time first, per booking of n.
func (s statements) perBooking(t *testing.T, n int) string {
	if !s.ok {
		return ""
	}
	ctx := context.Background()
	rows, err := s.pool.Query(ctx, `SELECT d.datname, s.calls, s.total_exec_time, s.rows, s.shared_blks_hit + s.shared_blks_read, s.query
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid ORDER BY s.total_exec_time DESC`)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	per := func(v float64) float64 { return v / float64(n) }
	fmt.Fprintf(&b, "PostgreSQL statements per new booking (%d bookings): calls, executor ms, rows, buffers; database; statement\n", n)
	var calls, ms float64
	for rows.Next() {
		var db, query string
		var c, r, blocks int64
		var exec float64
		require.NoError(t, rows.Scan(&db, &c, &exec, &r, &blocks, &query))
		calls, ms = calls+float64(c), ms+exec
		if query = strings.Join(strings.Fields(query), " "); len(query) > 200 {
			query = query[:200]
		}
		fmt.Fprintf(&b, "%8.2f %8.2f %8.2f %8.1f  %s  %s\n", per(float64(c)), per(exec), per(float64(r)), per(float64(blocks)), db, query)
	}
	require.NoError(t, rows.Err())
	fmt.Fprintf(&b, "all: %.1f statements, %.1f executor ms a booking\n", per(calls), per(ms))
	return b.String()
}

// writeSoakReport keeps, with SOAK_PROFILE_DIR set, one of a level's
// reports as <kind>-<name>.txt (requests-postgres-1000.txt).
func writeSoakReport(t *testing.T, kind, name, text string) {
	dir := os.Getenv("SOAK_PROFILE_DIR")
	if dir == "" || text == "" {
		return
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s.txt", kind, name)), []byte(text), 0o644))
}
