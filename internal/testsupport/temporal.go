package testsupport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/workflows"
)

var (
	temporalOnce sync.Once
	temporalSrv  *devserver.Temporal
	temporalErr  error
)

// Temporal returns a client of the package's in-process Temporal server
// (in-memory SQLite, started once per test binary, with bookonce's search
// attributes registered). Tests isolate themselves by task queue and
// workflow ID, not by server, because a server start costs seconds.
func Temporal(t testing.TB) client.Client {
	t.Helper()
	temporalOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		temporalSrv, temporalErr = devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0"})
		if temporalErr != nil {
			return
		}
		c, err := client.DialContext(ctx, loopbackOptions(client.Options{}))
		if err != nil {
			temporalErr = err
			return
		}
		defer c.Close()
		temporalErr = workflows.EnsureSearchAttributes(ctx, c, temporalSrv.Namespace())
	})
	require.NoError(t, temporalErr, "start in-process Temporal server")
	c, err := client.Dial(loopbackOptions(client.Options{Logger: quiet{}}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// loopbackOptions are o for the package's server, compressed as bookonce's
// processes compress calls to a loopback server.
func loopbackOptions(o client.Options) client.Options {
	o.HostPort, o.Namespace = temporalSrv.HostPort(), temporalSrv.Namespace()
	o.ConnectionOptions.GrpcCompression = config.TemporalCompression(o.HostPort)
	return o
}

// TemporalHostPort is the address of the package's in-process server.
func TemporalHostPort(t testing.TB) string {
	Temporal(t)
	return temporalSrv.HostPort()
}

// TaskQueue returns a task queue name unique to this test.
func TaskQueue(t testing.TB) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "test-" + hex.EncodeToString(b)
}

// Worker starts a worker on queue that registers what register adds, and
// stops it when the test ends.
func Worker(t testing.TB, c client.Client, queue string, register func(worker.Registry), interceptors ...interceptor.WorkerInterceptor) worker.Worker {
	t.Helper()
	w := worker.New(c, queue, worker.Options{WorkflowPanicPolicy: worker.FailWorkflow, Interceptors: interceptors})
	register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return w
}

// Eventually polls cond until it holds or the deadline passes; the message
// says what was awaited. It is a condition wait, not a sleep.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// QuietLogger is a Temporal SDK logger that drops everything, for clients
// of servers the tests start themselves.
func QuietLogger() sdklog.Logger { return quiet{} }

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
