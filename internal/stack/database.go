package stack

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/postgres"
)

// Database finds or starts PostgreSQL, opens a pool and migrates the
// schema. The returned close function also stops a private cluster that
// was started here.
func Database(ctx context.Context, cfg config.Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	url, stop, err := postgres.Discover(ctx, postgres.Options{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	// A process (re)started while PostgreSQL restarts waits for it, as
	// LoadTenants does: the ping may reach the server just before it goes
	// down, and the migration then fails on a lost connection.
	var pool *pgxpool.Pool
	err = ensurePatiently(ctx, DialPatience, func(ctx context.Context) (err error) {
		pool, err = postgres.Open(ctx, url)
		return err
	}, log)
	if err != nil {
		_ = stop()
		return nil, nil, fmt.Errorf("database: %w", err)
	}
	return pool, func() {
		pool.Close()
		if err := stop(); err != nil {
			log.Warn("stop private PostgreSQL", "err", err)
		}
	}, nil
}
