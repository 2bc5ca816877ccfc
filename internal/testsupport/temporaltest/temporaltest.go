// Package temporaltest starts the in-process Temporal server for the
// tests that need one. It is apart from testsupport so that a test binary
// which only wants a database or a fake does not link the server.
package temporaltest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/workflows"
)

var (
	once   sync.Once
	server *devserver.Temporal
	err    error
)

// Temporal returns a client of the package's in-process Temporal server
// (in-memory SQLite, started once per test binary, with bookonce's search
// attributes registered). Tests isolate themselves by task queue and
// workflow ID, not by server, because a server start costs seconds.
func Temporal(t testing.TB) client.Client {
	t.Helper()
	once.Do(start)
	require.NoError(t, err, "start in-process Temporal server")
	c, dialErr := client.Dial(loopbackOptions(client.Options{Logger: testsupport.QuietLogger()}))
	require.NoError(t, dialErr)
	t.Cleanup(c.Close)
	return c
}

// start starts the server and registers the search attributes.
func start() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	server, err = devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0"})
	if err != nil {
		return
	}
	c, dialErr := client.DialContext(ctx, loopbackOptions(client.Options{}))
	if dialErr != nil {
		err = dialErr
		return
	}
	defer c.Close()
	err = workflows.EnsureSearchAttributes(ctx, c, server.Namespace())
}

// loopbackOptions are o for the package's server, compressed as bookonce's
// processes compress calls to a loopback server.
func loopbackOptions(o client.Options) client.Options {
	o.HostPort, o.Namespace = server.HostPort(), server.Namespace()
	o.ConnectionOptions.GrpcCompression = config.TemporalCompression(o.HostPort)
	return o
}

// HostPort is the address of the package's in-process server.
func HostPort(t testing.TB) string {
	Temporal(t)
	return server.HostPort()
}
