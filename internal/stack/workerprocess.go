package stack

import (
	"context"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

// RunWorker is the worker process: the Temporal worker with every workflow
// and activity, the outbox relay (when Twilio is configured) and the
// worker's /healthz and /metrics, until ctx ends. cmd/worker runs it, and
// the chaos drill runs it in child processes it can SIGKILL.
func RunWorker(ctx context.Context, p Process) error {
	cfg, log := p.Config, p.Log
	reg := Registry()
	tc, err := Dial(ctx, cfg, log, WithMetrics(reg))
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
	w := Worker(tc, cfg, p.Pool)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	schedCtx, cancelSched := context.WithTimeout(ctx, 30*time.Second)
	err = EnsureReconcileSchedule(schedCtx, tc, cfg, log)
	cancelSched()
	if err != nil {
		return err
	}
	loops := []func(context.Context){}
	if cfg.TwilioAuthToken == config.DevTwilioAuthToken && cfg.TwilioAPIURL == "" {
		log.Warn("outbox sender disabled: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM to send messages")
	} else {
		sender := OutboxSender(cfg, p.Pool, Twilio(cfg), log)
		loops = append(loops, func(ctx context.Context) { _ = sender.Run(ctx, SendEvery) })
	}
	log.Info("worker started", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace, "metrics", cfg.WorkerListen)
	return Serve(ctx, log, map[string]web.Service{cfg.WorkerListen: WorkerServiceOn(reg, p.Pool, tc, log)}, loops...)
}
