package stack

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/interceptor"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

// DialPatience is how long a worker or gateway process waits at start for
// Temporal to answer.
const DialPatience = 2 * time.Minute

// RunWorker is the worker process: the Temporal worker with every workflow
// and activity, the outbox relay (when Twilio is configured), the mirror
// of the shops' calendars (every SHOP_CALENDAR_POLL), the
// retention sweep (every RECONCILE_INTERVAL) and the worker's /healthz and
// /metrics, until ctx ends. cmd/worker runs it, and
// the chaos drill runs it in child processes it can SIGKILL.
func RunWorker(ctx context.Context, p Process) error { return RunWorkerWith()(ctx, p) }

// RunWorkerWith is RunWorker whose worker has interceptors added: the new
// build of a deploy rehearsal carries its workflow change this way
// (package deploychange).
func RunWorkerWith(interceptors ...interceptor.WorkerInterceptor) func(context.Context, Process) error {
	return func(ctx context.Context, p Process) error { return runWorker(ctx, p, interceptors) }
}

func runWorker(ctx context.Context, p Process, interceptors []interceptor.WorkerInterceptor) error {
	cfg, log := p.Config, p.Log
	reg := Registry()
	tc, err := DialPatiently(ctx, cfg, log, DialPatience, WithMetrics(reg))
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
	tenants, err := LoadTenants(ctx, p.Config, p.Pool, log)
	if err != nil {
		return err
	}
	w, acts := Worker(tc, cfg, p.Pool, tenants, interceptors...)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	if err := promoteOnStart(ctx, tc, cfg, log); err != nil {
		return err
	}
	if err := ensurePatiently(ctx, DialPatience, func(ctx context.Context) error {
		return EnsureReconcileSchedule(ctx, tc, cfg, log)
	}, log); err != nil {
		return err
	}
	sweeper := RetentionSweeper(cfg, p.Pool, reg, log)
	loops := []func(context.Context){RunTenants(tenants), func(ctx context.Context) { sweeper.Run(ctx, cfg.ReconcileInterval) },
		// What staff enter in the shops' own calendars blocks the slot.
		func(ctx context.Context) { acts.ShopMirror.Run(ctx, cfg.ShopCalendarPoll) }}
	if cfg.TwilioAuthToken == config.DevTwilioAuthToken && cfg.TwilioAPIURL == "" {
		log.Warn("outbox sender disabled: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM to send messages")
	} else {
		sender := OutboxSender(cfg, p.Pool, Twilio(cfg), log)
		ForTenants(sender, tenants)
		loops = append(loops, func(ctx context.Context) { _ = sender.Run(ctx, SendEvery) })
	}
	log.Info("worker started", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace, "metrics", cfg.WorkerListen)
	return Serve(ctx, log, map[string]web.Service{cfg.WorkerListen: WorkerServiceOn(reg, p.Pool, tc, log)}, loops...)
}

// ensurePatiently retries ensure (bounded by 30 s an attempt) until it
// succeeds or patience runs out: Temporal may be restarting.
func ensurePatiently(ctx context.Context, patience time.Duration, ensure func(context.Context) error, log *slog.Logger) error {
	deadline, wait := time.Now().Add(patience), time.Second
	for {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := ensure(actx)
		cancel()
		if err == nil || time.Now().Add(wait).After(deadline) || ctx.Err() != nil {
			return err
		}
		log.Warn("retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}
