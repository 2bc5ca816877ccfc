package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

// temporalBackend is a Temporal server the soak runs on, in a process
// of its own.
type temporalBackend struct {
	name  string
	start func(t *testing.T) temporalServer
}

// temporalServer is a started server: a client of it, its process and a
// reading of the size of its stores.
type temporalServer struct {
	tc        client.Client
	hostPort  string
	proc      proc
	metrics   string // its own /metrics
	storeSize func() int64
	// databases are the URLs of its PostgreSQL databases (none on SQLite).
	databases []string
}

// temporalBackends are the servers side by side: make run's SQLite file,
// and the same server module on PostgreSQL with four history shards as
// compose runs the official image (devserver.Postgres).
var temporalBackends = []temporalBackend{
	{"sqlite", func(t *testing.T) temporalServer {
		dir := t.TempDir()
		p, addr, metrics := startTemporalProcess(t, soakTemporalDB+"="+filepath.Join(dir, "temporal.db"))
		return temporalServer{tc: dialBenchServer(t, addr), hostPort: addr, proc: p, metrics: metrics,
			storeSize: func() int64 { return fileSizes(t, filepath.Join(dir, "temporal*.db*")) }}
	}},
	{"postgres", startPostgresTemporal},
}

// soakBackends are SOAK_BACKENDS' backends (default: both).
func soakBackends(t *testing.T) []temporalBackend {
	raw := os.Getenv("SOAK_BACKENDS")
	if raw == "" {
		return temporalBackends
	}
	var out []temporalBackend
	for _, name := range strings.Split(raw, ",") {
		found := false
		for _, b := range temporalBackends {
			if b.name == strings.TrimSpace(name) {
				out, found = append(out, b), true
			}
		}
		require.True(t, found, "SOAK_BACKENDS: %q is neither sqlite nor postgres", name)
	}
	return out
}

// postgresShards is compose's NUM_HISTORY_SHARDS.
const postgresShards = 4

// startPostgresTemporal starts the server on two fresh databases of the
// tests' PostgreSQL; the size is that of both databases, read on a
// connection opened now: at a level's end the server's and bookonce's
// pools can hold every connection the PostgreSQL server allows (a full
// soak on a saturated machine failed at 20,000 open with "too many
// clients already").
func startPostgresTemporal(t *testing.T) temporalServer {
	admin, name := testsupport.TemporalDatabases(t)
	sizes, err := pgx.Connect(context.Background(), admin)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sizes.Close(context.Background()) })
	p, addr, metrics := startTemporalProcess(t, soakTemporalPG+"="+admin, soakTemporalPGDB+"="+name)
	return temporalServer{tc: dialBenchServer(t, addr), hostPort: addr, proc: p, metrics: metrics,
		databases: []string{databaseURL(t, admin, name), databaseURL(t, admin, name+"_visibility")}, storeSize: func() int64 {
			var n int64
			require.NoError(t, sizes.QueryRow(context.Background(), `SELECT pg_database_size($1) + pg_database_size($1 || '_visibility')`, name).Scan(&n))
			return n
		}}
}

// databaseURL is the PostgreSQL URL admin with its database replaced by
// name.
func databaseURL(t *testing.T, admin, name string) string {
	u, err := url.Parse(admin)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// settleDatabases leaves each database as a production PostgreSQL would
// have it after the seeding, before a level's load is measured.
//
//   - Where autovacuum is off (this machine's PostgreSQL), VACUUM
//     (ANALYZE) does its work. A production PostgreSQL analyses a table
//     once a tenth of it has changed and vacuums it once a fifth is dead.
//     Without the statistics the planner read the tenant's whole GiST
//     overlap index for every reservation lookup; without the vacuum
//     Temporal's database held more dead rows than live ones at 5000
//     open (queue tasks done, workflow rows rewritten), and PostgreSQL's
//     CPU a booking grew with every level.
//   - Everywhere, a CHECKPOINT writes the pages the seeding (and the
//     vacuum) dirtied. Otherwise the next checkpoint writes minutes of
//     seeding inside the measured minute: a burst no steady production
//     load has, and the load queued behind it (docs/benchmarks.md,
//     "Vacuum and checkpoint before each level").
//
// A CHECKPOINT needs a superuser or pg_checkpoint; without either the
// soak says so and goes on.
func settleDatabases(t *testing.T, urls ...string) {
	ctx := context.Background()
	servers := map[string]string{} // a URL of each PostgreSQL server, by address
	for _, u := range urls {
		conn, err := pgx.Connect(ctx, u)
		require.NoError(t, err)
		servers[fmt.Sprintf("%s:%d", conn.Config().Host, conn.Config().Port)] = u
		var on string
		require.NoError(t, conn.QueryRow(ctx, `SHOW autovacuum`).Scan(&on))
		if on == "off" {
			start := time.Now()
			var dead, live int64
			require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(sum(n_dead_tup), 0), coalesce(sum(n_live_tup), 0) FROM pg_stat_user_tables`).Scan(&dead, &live))
			_, err = conn.Exec(ctx, `VACUUM (ANALYZE)`)
			require.NoError(t, err)
			t.Logf("soak: vacuumed %s (autovacuum is off) in %v: %d dead rows, %d live", conn.Config().Database, time.Since(start).Round(time.Millisecond), dead, live)
		}
		require.NoError(t, conn.Close(ctx))
	}
	// A checkpoint is the whole server's: one each, after every vacuum.
	for addr, u := range servers {
		conn, err := pgx.Connect(ctx, u)
		require.NoError(t, err)
		start := time.Now()
		if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
			t.Logf("soak: no CHECKPOINT on %s before the load (%v): the seeding's writes may land in the measured minute", addr, err)
		} else {
			t.Logf("soak: checkpoint on %s in %v", addr, time.Since(start).Round(time.Millisecond))
		}
		require.NoError(t, conn.Close(ctx))
	}
}

// dialBenchServer dials the server at hostPort (namespace default) as
// the stack does and registers bookonce's search attributes.
func dialBenchServer(t *testing.T, hostPort string) client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tc, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: "default", Logger: testsupport.QuietLogger(),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: config.TemporalCompression(hostPort)}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	require.NoError(t, workflows.EnsureSearchAttributes(ctx, tc, "default"))
	return tc
}
