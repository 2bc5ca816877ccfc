// Command dev runs the whole bookonce stack in one process for local work:
// PostgreSQL (found or started), the embedded Temporal server and Web UI,
// the worker, the webhook gateway and the calendar and payment APIs.
// `make run` starts it; Ctrl-C stops everything cleanly.
package main

import (
	// Times in messages are stated in BOOKONCE_TIMEZONE on any host, with
	// or without system tzdata.
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
	_ "time/tzdata"

	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

func main() {
	ctx, stop, cfg, log := stack.Begin()
	defer stop()
	step := func(msg string) { fmt.Fprintf(os.Stderr, "  … %s\n", msg) }

	step("PostgreSQL")
	pool, closeDB, err := stack.Database(ctx, cfg, log)
	if err != nil {
		stack.Fatal(log, "PostgreSQL", err)
	}
	defer closeDB()

	uiURL := ""
	if !cfg.TemporalAddressSet {
		step("embedded Temporal server (" + cfg.TemporalAddress + ")")
		ts, err := devserver.StartTemporal(ctx, devserver.Options{
			Address: cfg.TemporalAddress, DatabaseFile: filepath.Join(cfg.DataDir, "temporal.db"), Namespace: cfg.TemporalNamespace,
		})
		if err != nil {
			stack.Fatal(log, "embedded Temporal server", err)
		}
		defer func() { _ = ts.Stop() }()
		step("Temporal Web UI")
		ui, err := devserver.StartUI(ctx, ts.HostPort(), "127.0.0.1", cfg.TemporalUIPort, cfg.TemporalNamespace)
		if err != nil {
			stack.Fatal(log, "Temporal Web UI", err)
		}
		defer ui.Stop()
		uiURL = ui.URL()
	}

	// The worker and the gateway each get their own client, so each
	// /metrics shows its own service's Temporal calls.
	workerReg, gatewayReg := stack.Registry(), stack.Registry()
	tc, err := stack.Dial(ctx, cfg, log, stack.WithMetrics(workerReg))
	if err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	defer tc.Close()
	gatewayTC, err := stack.Dial(ctx, cfg, log, stack.WithMetrics(gatewayReg))
	if err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	defer gatewayTC.Close()
	saCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = workflows.EnsureSearchAttributes(saCtx, tc, cfg.TemporalNamespace)
	cancel()
	if err != nil {
		stack.Fatal(log, "search attributes", err)
	}

	step("APIs and gateway")
	g, gctx := errgroup.WithContext(ctx)
	calendarSvc, calStore := stack.CalendarService(cfg, pool, log)
	paymentsSvc, payStore := stack.PaymentsService(cfg, pool, log)
	workerSvc := stack.WorkerServiceOn(workerReg, pool, tc, log)
	gw, gwReg := stack.GatewayOn(gatewayReg, cfg, pool, gatewayTC, log, calendarSvc.Gatherer, paymentsSvc.Gatherer, workerSvc.Gatherer)
	if err := stack.ServeAll(gctx, g, log, map[string]web.Service{
		cfg.GatewayListen:  stack.GatewayService(gw, gwReg, log),
		cfg.CalendarListen: calendarSvc,
		cfg.PaymentsListen: paymentsSvc,
		cfg.WorkerListen:   workerSvc,
	}); err != nil {
		stack.Fatal(log, "listen", err)
	}
	g.Go(func() error { calStore.RunReaper(gctx, stack.ReapEvery); return nil })
	g.Go(func() error { payStore.RunReaper(gctx, stack.ReapEvery); return nil })
	g.Go(func() error { stack.PaymentsWebhooks(cfg, pool, log).Run(gctx, stack.DeliverEvery); return nil })
	g.Go(func() error { gw.RunRelay(gctx, stack.RelayEvery); return nil })
	twilioClient, twilioNote := stack.Twilio(cfg), "Twilio"
	if cfg.TwilioAPIURL == "" && cfg.TwilioAuthToken == config.DevTwilioAuthToken {
		var fake interface {
			Close()
			URL() string
		}
		twilioClient, fake = stack.DevTwilio(cfg)
		defer fake.Close()
		twilioNote = "fake Twilio at " + fake.URL()
	}
	sender := stack.OutboxSender(cfg, pool, twilioClient, log)
	g.Go(func() error { _ = sender.Run(gctx, stack.SendEvery); return nil })

	step("worker")
	w := stack.Worker(tc, cfg, pool)
	if err := w.Start(); err != nil {
		stack.Fatal(log, "worker", err)
	}
	defer w.Stop()
	if err := stack.EnsureReconcileSchedule(ctx, tc, cfg, log); err != nil {
		stack.Fatal(log, "reconciler schedule", err)
	}

	fmt.Fprintf(os.Stderr, "\nbookonce is running (Ctrl-C stops it)\n")
	if uiURL != "" {
		fmt.Fprintf(os.Stderr, "  Temporal Web UI  %s/namespaces/%s/workflows\n", uiURL, cfg.TemporalNamespace)
	}
	fmt.Fprintf(os.Stderr, "  Temporal gRPC    %s (namespace %s)\n", cfg.TemporalAddress, cfg.TemporalNamespace)
	fmt.Fprintf(os.Stderr, "  Gateway          http://%s   (/healthz, /metrics)\n", cfg.GatewayListen)
	fmt.Fprintf(os.Stderr, "  Ops page         http://%s/ops?token=<token from BOOKONCE_API_TOKENS>\n", cfg.GatewayListen)
	fmt.Fprintf(os.Stderr, "  Calendar API     http://%s   (Authorization: Bearer %s)\n", cfg.CalendarListen, "<token from BOOKONCE_API_TOKENS>")
	fmt.Fprintf(os.Stderr, "  Payment API      http://%s\n", cfg.PaymentsListen)
	fmt.Fprintf(os.Stderr, "  Messages         outbox -> %s\n", twilioNote)
	fmt.Fprintf(os.Stderr, "\nTry: GOTOOLCHAIN=go1.27.3 go run ./cmd/starter book --customer +4915112345678 --service tire-change --start 2026-12-01T14:00:00+01:00\n\n")

	<-gctx.Done()
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		stack.Fatal(log, "stopped", err)
	}
	fmt.Fprintln(os.Stderr, "bookonce: stopping")
}
