package devserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/postgres"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestServerOnPostgres starts the server on PostgreSQL with four history
// shards, as compose runs the official image: the schema tool creates and
// migrates both databases, a workflow started there is described from
// them, and the shards are four rows. (A restart on the same databases
// waits about 40 s for the first incarnation's membership to expire: the
// persistence across restarts is TestPersistentServerAndWebUI's, on SQLite.)
func TestServerOnPostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, name := testsupport.TemporalDatabases(t)
	opts := devserver.Options{Address: "127.0.0.1:0", Postgres: &devserver.Postgres{URL: admin, Database: name, Shards: 4}}

	ts, err := devserver.StartTemporal(ctx, opts)
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: ts.HostPort(), Logger: testsupport.QuietLogger()})
	require.NoError(t, err)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept-in-postgres", TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())
	c.Close()
	require.NoError(t, ts.Stop())

	dbURL, err := postgres.WithDatabase(admin, name)
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var shards, executions int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM shards`).Scan(&shards))
	require.Equal(t, 4, shards)
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM executions`).Scan(&executions))
	require.Positive(t, executions, "the workflow is in PostgreSQL")
}
