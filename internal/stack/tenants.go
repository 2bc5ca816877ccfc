package stack

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/tenants"
)

// SeedDemoTenants gives a development database the demo tenant
// (deploy/tenants.demo.yaml) when no tenant is configured yet: a fresh
// `make run` books at once, and tenants a developer applied since are
// never overwritten.
func SeedDemoTenants(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	diff, err := deploy.ApplyDemoTenants(ctx, pool, tenants.ApplyOptions{OnlyIfEmpty: true})
	if err != nil {
		return fmt.Errorf("demo tenant: %w", err)
	}
	if !diff.Empty() {
		log.Info("no tenant configured: applied the demo tenant", "file", deploy.DemoFileName)
	}
	return nil
}

// LoadTenants loads the tenants registry a process serves from; run its
// Reload loop (RunTenants) so an applied tenants.yaml is picked up
// without a restart. A process reachable from other hosts refuses a
// registry that accepts the development token (config.CheckTenantDigests;
// checked at start, not on each reload).
func LoadTenants(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, log *slog.Logger) (*tenants.Registry, error) {
	// A process (re)started while PostgreSQL restarts waits for it, as it
	// waits for Temporal, instead of exiting.
	var reg *tenants.Registry
	err := ensurePatiently(ctx, DialPatience, func(ctx context.Context) (err error) {
		reg, err = tenants.LoadRegistry(ctx, pool, log.With("component", "tenants"))
		return err
	}, log)
	if err != nil {
		return nil, fmt.Errorf("load tenants: %w", err)
	}
	warning, err := cfg.CheckTenantDigests(func(d string) bool { _, ok := reg.TenantOfDigest(d); return ok })
	if err != nil {
		return nil, err
	}
	if warning != "" {
		log.Warn(warning)
	}
	if len(reg.All()) == 0 {
		log.Warn("no tenant configured: every webhook is answered 'not configured' and every API token refused; apply a tenants.yaml (starter tenants apply)")
	}
	return reg, nil
}

// RunTenants is the background loop that reloads reg every
// tenants.DefaultReloadInterval until ctx ends.
func RunTenants(reg *tenants.Registry) func(context.Context) {
	return func(ctx context.Context) { reg.Run(ctx, tenants.DefaultReloadInterval) }
}
