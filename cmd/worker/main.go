// Command worker runs the bookonce Temporal worker: the appointment,
// payment and conversation workflows and their activities, plus the outbox
// relay. Run as many as you like; the idempotency keys make their retries
// and re-executions harmless.
package main

import (
	// Times in messages are stated in BOOKONCE_TIMEZONE on any host, with
	// or without system tzdata.
	"context"
	"time"
	_ "time/tzdata"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

func main() {
	stack.Command("worker", func(ctx context.Context, p stack.Process) error {
		cfg, log := p.Config, p.Log
		tc, err := stack.Dial(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer tc.Close()
		saCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := workflows.EnsureSearchAttributes(saCtx, tc, cfg.TemporalNamespace); err != nil {
			// A worker without operator rights may still run if they exist.
			log.Warn("could not ensure search attributes", "err", err)
		}
		cancel()
		w := stack.Worker(tc, cfg, p.Pool)
		if err := w.Start(); err != nil {
			return err
		}
		defer w.Stop()
		loops := []func(context.Context){}
		if cfg.TwilioAuthToken == config.DevTwilioAuthToken && cfg.TwilioAPIURL == "" {
			log.Warn("outbox sender disabled: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM to send messages")
		} else {
			sender := stack.OutboxSender(cfg, p.Pool, stack.Twilio(cfg), log)
			loops = append(loops, func(ctx context.Context) { _ = sender.Run(ctx, stack.SendEvery) })
		}
		log.Info("worker started", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace, "metrics", cfg.WorkerListen)
		return stack.Serve(ctx, log, map[string]web.Service{cfg.WorkerListen: stack.WorkerService(p.Pool, tc, log)}, loops...)
	})
}
