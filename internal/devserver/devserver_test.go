package devserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/testsupport"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestPersistentServerAndWebUI starts the embedded server on a SQLite file
// with the Web UI, checks the UI serves its page and API, then restarts the
// server on the same file and finds the namespace state still there.
func TestPersistentServerAndWebUI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	file := filepath.Join(t.TempDir(), "temporal.db")

	ts, err := devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0", DatabaseFile: file})
	require.NoError(t, err)
	requireWAL(t, file)
	ui, err := devserver.StartUI(ctx, ts.HostPort(), "127.0.0.1", freePort(t), "default", devserver.WithCodec("http://127.0.0.1:8080/ops/codec"))
	require.NoError(t, err)

	// With payload keys the UI decodes through the gateway's codec
	// server, sending the browser's ops session cookie.
	resp, err := http.Get(ui.URL() + "/api/v1/settings")
	require.NoError(t, err)
	var settings struct {
		Codec struct {
			Endpoint           string
			IncludeCredentials bool
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
	resp.Body.Close()
	require.Equal(t, "http://127.0.0.1:8080/ops/codec", settings.Codec.Endpoint)
	require.True(t, settings.Codec.IncludeCredentials)

	resp, err = http.Get(ui.URL() + "/")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, strings.ToLower(string(page)), "<html")

	// The UI's API reaches the frontend (it proxies gRPC).
	resp, err = http.Get(ui.URL() + "/api/v1/namespaces/default")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A workflow started before the restart must still be there after it.
	c, err := client.Dial(client.Options{HostPort: ts.HostPort()})
	require.NoError(t, err)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "persisted", TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)
	c.Close()
	ui.Stop()
	require.NoError(t, ts.Stop())

	// A taken port gives a clear message instead of a panic deep inside.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = devserver.StartTemporal(ctx, devserver.Options{Address: l.Addr().String()})
	require.ErrorContains(t, err, "TEMPORAL_ADDRESS")

	again, err := devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0", DatabaseFile: file})
	require.NoError(t, err, "restart on the existing SQLite file")
	defer func() { require.NoError(t, again.Stop()) }()
	c, err = client.Dial(client.Options{HostPort: again.HostPort()})
	require.NoError(t, err)
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "persisted", run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, "Nothing", desc.GetWorkflowExecutionInfo().GetType().GetName())
}

// requireWAL checks the file's header: bytes 18 and 19 (the read and
// write format versions) are 2 in WAL mode and 1 in rollback-journal mode
// (https://www.sqlite.org/fileformat2.html#the_database_header), which
// an unknown pragma name silently left in place.
func requireWAL(t *testing.T, file string) {
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	header := make([]byte, 20)
	_, err = io.ReadFull(f, header)
	require.NoError(t, err)
	require.Equal(t, []byte{2, 2}, header[18:20], "the Temporal file is in WAL mode")
}

// TestStartReturnsWithMatchingInTheRing: once StartTemporal returns, a
// request that needs the matching service is answered at the first try,
// and stopping at once is safe. Matching joins the membership ring in a
// goroutine after the server's Start; a Stop before that join finished
// crashed the test binary inside ringpop.
func TestStartReturnsWithMatchingInTheRing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ts, err := devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0"})
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: ts.HostPort()})
	require.NoError(t, err)
	_, err = c.DescribeTaskQueue(ctx, "nobody-polls", enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	c.Close()
	require.NoError(t, err, "matching answers as soon as the server is ready")
	require.NoError(t, ts.Stop())
}

func TestParseSync(t *testing.T) {
	for _, c := range []struct {
		in   string
		want devserver.Sync
		err  string
	}{
		{"", devserver.SyncNormal, ""},
		{"normal", devserver.SyncNormal, ""},
		{" FULL ", devserver.SyncFull, ""},
		{"off", "", `unknown sync mode "off"`},
	} {
		got, err := devserver.ParseSync(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
}

// TestVisibilityFileOnlyForNewData: a new data file gets its workflow
// lists in VisibilityFile, which survives a restart; a data file found
// without one (created before the split) keeps its lists in itself and
// gets no second file.
func TestVisibilityFileOnlyForNewData(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	file := filepath.Join(t.TempDir(), "temporal.db")
	vis := devserver.VisibilityFile(file)
	require.Equal(t, filepath.Join(filepath.Dir(file), "temporal-visibility.db"), vis)

	c, stop := startOnFile(t, ctx, file)
	requireWAL(t, file)
	requireWAL(t, vis)
	startAndList(t, ctx, c, "first")
	stop()

	c, stop = startOnFile(t, ctx, file)
	require.Equal(t, []string{"first"}, listed(t, ctx, c), "the lists survive a restart")
	stop()

	for _, f := range []string{vis, vis + "-wal", vis + "-shm"} {
		require.NoError(t, os.RemoveAll(f))
	}
	c, stop = startOnFile(t, ctx, file)
	defer stop()
	startAndList(t, ctx, c, "second")
	_, err := os.Stat(vis)
	require.ErrorIs(t, err, os.ErrNotExist, "a data file without a visibility file keeps its lists in itself")
}

func startOnFile(t *testing.T, ctx context.Context, file string) (client.Client, func()) {
	t.Helper()
	ts, err := devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0", DatabaseFile: file})
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: ts.HostPort()})
	require.NoError(t, err)
	return c, func() { c.Close(); require.NoError(t, ts.Stop()) }
}

// startAndList starts a workflow nobody runs and waits until the
// namespace's list shows it.
func startAndList(t *testing.T, ctx context.Context, c client.Client, id string) {
	t.Helper()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "nobody-polls"}, "Nothing")
	require.NoError(t, err)
	testsupport.Eventually(t, 30*time.Second, id+" in the list", func() bool { return slices.Contains(listed(t, ctx, c), id) })
}

func listed(t *testing.T, ctx context.Context, c client.Client) []string {
	t.Helper()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
	require.NoError(t, err)
	var ids []string
	for _, e := range resp.GetExecutions() {
		ids = append(ids, e.GetExecution().GetWorkflowId())
	}
	return ids
}
