// Command worker runs the bookonce Temporal worker: the appointment and
// payment sagas and their activities. Run as many as you like; the
// idempotency keys make their retries and re-executions harmless.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
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
	saCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if err := workflows.EnsureSearchAttributes(saCtx, tc, cfg.TemporalNamespace); err != nil {
		// A worker without operator rights may still run if they exist.
		log.Warn("could not ensure search attributes", "err", err)
	}
	cancel()
	w := stack.Worker(tc, cfg, pool)
	if cfg.TwilioAuthToken == config.DevTwilioAuthToken && cfg.TwilioAPIURL == "" {
		log.Warn("outbox sender disabled: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM to send messages")
	} else {
		sender := stack.OutboxSender(cfg, pool, stack.Twilio(cfg), log)
		go func() { _ = sender.Run(ctx, stack.SendEvery) }()
	}
	l, err := web.Listen(cfg.WorkerListen)
	if err != nil {
		stack.Fatal(log, "listen", err)
	}
	go func() { _ = stack.WorkerService(pool, tc, log).Serve(ctx, l) }()
	log.Info("worker started", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace, "metrics", cfg.WorkerListen)
	if err := w.Run(worker.InterruptCh()); err != nil {
		stack.Fatal(log, "worker", err)
	}
}
