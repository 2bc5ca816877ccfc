package bench

import (
	"context"
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
// tests' PostgreSQL; the size is that of both databases.
func startPostgresTemporal(t *testing.T) temporalServer {
	admin, name := testsupport.TemporalDatabases(t)
	p, addr, metrics := startTemporalProcess(t, soakTemporalPG+"="+admin, soakTemporalPGDB+"="+name)
	return temporalServer{tc: dialBenchServer(t, addr), hostPort: addr, proc: p, metrics: metrics, storeSize: func() int64 {
		conn, err := pgx.Connect(context.Background(), admin)
		require.NoError(t, err)
		defer conn.Close(context.Background())
		var n int64
		require.NoError(t, conn.QueryRow(context.Background(), `SELECT pg_database_size($1) + pg_database_size($1 || '_visibility')`, name).Scan(&n))
		return n
	}}
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
