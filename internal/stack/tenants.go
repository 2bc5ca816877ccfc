package stack

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/tenants"
)

// SeedDemoTenants gives a development database the demo tenant
// (deploy/tenants.demo.yaml) when no tenant is configured yet: a fresh
// `make run` books at once, and tenants a developer applied since are
// never overwritten.
func SeedDemoTenants(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	diff, err := tenants.ApplyDemo(ctx, pool, tenants.ApplyOptions{OnlyIfEmpty: true})
	if err != nil {
		return fmt.Errorf("demo tenant: %w", err)
	}
	if !diff.Empty() {
		log.Info("no tenant configured: applied the demo tenant", "file", tenants.DemoFileName)
	}
	return nil
}
