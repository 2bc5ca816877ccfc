// Package workflowtest is what the workflow packages' unit tests share:
// the SDK's time-skipping environment as make test needs it, an SDK log
// kept for failures, and the IDs every unit test names. It is imported by
// tests only; workflow code never depends on it.
package workflowtest

import (
	"bytes"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/workflows/appointment"
)

// AppointmentID is the appointment's workflow ID (and business reference)
// in every unit test; its payment saga runs as payment:<it> and its
// lifecycle as lifecycle.WorkflowID(it).
var AppointmentID = appointment.WorkflowID("demo", "unit0intent0000000000000")

// KeyPattern is every idempotency key an activity derives from its
// execution (activities.KeyOf).
var KeyPattern = regexp.MustCompile(`^bko1_[0-9a-f]{48}$`)

// CustomerKey is number's key in tenant demo with the development secret,
// the one the test stacks' gateways use (testsupport.CustomerKey, without
// a test).
func CustomerKey(number string) customerid.Key {
	k, err := customerid.Dev().Key("demo", number)
	if err != nil {
		panic(err)
	}
	return k
}

// Environment is suite's time-skipping environment with the deadlock
// detector at 10 s instead of the SDK's 1 s: make test runs these tests
// beside the drill and the linking of other test binaries, and a workflow
// task starved of the CPU for a second is not a deadlock (a real one
// still fails the test, 10 s later).
func Environment(suite *testsuite.WorkflowTestSuite) *testsuite.TestWorkflowEnvironment {
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	return env
}

// NewEnv is a fresh time-skipping Environment for t whose SDK log is
// printed if t fails.
func NewEnv(t testing.TB) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	logs := &Log{}
	suite.SetLogger(logs)
	logs.LogOnFailure(t)
	return Environment(&suite)
}

// Log keeps the SDK's log in memory (the environment's goroutines may log
// after the test returned); LogOnFailure prints it when the test failed.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) write(level, msg string, kv []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.buf, "%s %s %v\n", level, msg, kv)
}

// Debug drops the message: the SDK's debug lines drown the rest.
func (l *Log) Debug(string, ...any) {}

// Info keeps the message.
func (l *Log) Info(msg string, kv ...any) { l.write("INFO", msg, kv) }

// Warn keeps the message.
func (l *Log) Warn(msg string, kv ...any) { l.write("WARN", msg, kv) }

// Error keeps the message.
func (l *Log) Error(msg string, kv ...any) { l.write("ERROR", msg, kv) }

// String is everything kept so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// LogOnFailure prints what l kept once t has failed.
func (l *Log) LogOnFailure(t testing.TB) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("SDK log:\n" + l.String())
		}
	})
}
