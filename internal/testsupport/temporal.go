package testsupport

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

// The Temporal server itself is started by package temporaltest: only the
// test binaries that need a server link it (about 120 MB and a core for
// seconds at every link).

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
