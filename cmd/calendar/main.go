// Command calendar serves the calendar API (holds, bookings, availability)
// with the Idempotency-Key contract on PostgreSQL.
package main

import (
	"fmt"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
)

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookonce:", err)
		os.Exit(2)
	}
	log := stack.Logger(cfg, os.Stderr)
	ctx, stop := stack.SignalContext()
	defer stop()
	pool, closeDB, err := stack.Database(ctx, cfg, log)
	if err != nil {
		stack.Fatal(log, "PostgreSQL", err)
	}
	defer closeDB()
	svc, store := stack.CalendarService(cfg, pool, log)
	g, gctx := errgroup.WithContext(ctx)
	if err := stack.ServeAll(gctx, g, log, map[string]web.Service{cfg.CalendarListen: svc}); err != nil {
		stack.Fatal(log, "listen", err)
	}
	g.Go(func() error { store.RunReaper(gctx, stack.ReapEvery); return nil })
	log.Info("calendar API listening", "addr", cfg.CalendarListen)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		stack.Fatal(log, "calendar API", err)
	}
}
