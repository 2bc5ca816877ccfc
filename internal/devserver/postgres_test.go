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
// migrates both databases, a workflow started before a restart is there
// after it, the shards are four rows, and a second start on migrated
// databases changes nothing.
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
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "persisted-in-postgres", TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)
	c.Close()
	require.NoError(t, ts.Stop())

	opts.Address = "127.0.0.1:0"
	ts, err = devserver.StartTemporal(ctx, opts)
	require.NoError(t, err)
	defer func() { require.NoError(t, ts.Stop()) }()
	c, err = client.Dial(client.Options{HostPort: ts.HostPort(), Logger: testsupport.QuietLogger()})
	require.NoError(t, err)
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())

	dbURL, err := postgres.WithDatabase(admin, name)
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var shards int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM shards`).Scan(&shards))
	require.Equal(t, 4, shards)
}
