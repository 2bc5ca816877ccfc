// Command gateway serves the Twilio voice and WhatsApp webhooks: verified,
// recorded in the inbox, handed to the customer's conversation workflow.
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
	tc, err := stack.Dial(ctx, cfg, log)
	if err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	defer tc.Close()
	g, gctx := errgroup.WithContext(ctx)
	gw, reg := stack.Gateway(cfg, pool, tc, log)
	if err := stack.ServeAll(gctx, g, log, map[string]web.Service{cfg.GatewayListen: stack.GatewayService(gw, reg, log)}); err != nil {
		stack.Fatal(log, "listen", err)
	}
	g.Go(func() error { gw.RunRelay(gctx, stack.RelayEvery); return nil })
	log.Info("gateway listening", "addr", cfg.GatewayListen)
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		stack.Fatal(log, "gateway", err)
	}
}
