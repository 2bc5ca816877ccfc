package stack_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
)

// TestLoadTenantsRefusesTheDevTokenWhenReachable: the demo tenant lists the
// digest of the development token, so a process reachable from other
// hosts refuses to serve from it (unless BOOKONCE_ALLOW_DEV_SECRETS=1);
// on loopback (make run, the tests) it serves.
func TestLoadTenantsRefusesTheDevTokenWhenReachable(t *testing.T) {
	pool := testsupport.Database(t) // with the demo tenant
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

	cfg := testsupport.Config(t)
	_, err := stack.LoadTenants(ctx, cfg, pool, log)
	require.NoError(t, err, "loopback")

	cfg.GatewayListen = "0.0.0.0:8080"
	_, err = stack.LoadTenants(ctx, cfg, pool, log)
	require.ErrorContains(t, err, "api_token_sha256")
	require.ErrorContains(t, err, "GATEWAY_LISTEN=0.0.0.0:8080")
	require.ErrorContains(t, err, "BOOKONCE_ALLOW_DEV_SECRETS=1")
}

// TestLoadTenantsWaitsForTheDatabase: a process started while PostgreSQL
// restarts (the drill's API kills meet its restart) waits for it and
// serves, instead of exiting on the first refused connection.
func TestLoadTenantsWaitsForTheDatabase(t *testing.T) {
	_, dbURL := testsupport.DatabaseURL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	gate := &dbGate{upstream: u.Host}
	gate.down.Store(true)
	u.Host = gate.listen(t)
	pool, err := pgxpool.New(context.Background(), u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	done := make(chan error, 1)
	go func() {
		_, err := stack.LoadTenants(context.Background(), testsupport.Config(t), pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
		done <- err
	}()
	testsupport.Eventually(t, 30*time.Second, "two attempts refused", func() bool { return gate.refused.Load() >= 2 })
	gate.down.Store(false)
	require.NoError(t, <-done, "loaded once the database was back")
}

// dbGate forwards connections to the database, or cuts them while down.
type dbGate struct {
	upstream string
	down     atomic.Bool
	refused  atomic.Int64
}

func (g *dbGate) listen(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if g.down.Load() {
				g.refused.Add(1)
				_ = c.Close()
				continue
			}
			go g.forward(c)
		}
	}()
	return l.Addr().String()
}

func (g *dbGate) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", g.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}
