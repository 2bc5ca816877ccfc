package stack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/internal/web"
)

// SignalContext ends on Ctrl-C or SIGTERM, so every process stops cleanly.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// ServeAll binds every service first (so a taken port fails before
// anything reports ready), then serves them until ctx ends or one fails.
func ServeAll(ctx context.Context, g *errgroup.Group, log *slog.Logger, services map[string]web.Service) error {
	type bound struct {
		svc  web.Service
		addr string
	}
	var all []bound
	for addr, svc := range services {
		l, err := web.Listen(addr)
		if err != nil {
			return fmt.Errorf("%s: %w", svc.Name, err)
		}
		svc := svc
		g.Go(func() error { return svc.Serve(ctx, l) })
		all = append(all, bound{svc, l.Addr().String()})
	}
	for _, b := range all {
		log.Debug("serving", "service", b.svc.Name, "addr", b.addr)
	}
	return nil
}

// Fatal prints a helpful message and exits non-zero.
func Fatal(log *slog.Logger, what string, err error) {
	log.Error(what, "err", err)
	fmt.Fprintf(os.Stderr, "\nbookonce: %s: %v\n", what, err)
	os.Exit(1)
}

// Begin is how every bookonce process starts: its configuration (exit 2
// with the problem when it is invalid, or when it holds development values
// of the secrets the process uses while reachable from other hosts), the
// logger, tracing (exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is
// set; exit 2 when the exporter cannot be built), and a context that ends
// on Ctrl-C or SIGTERM (stop releases it and flushes the spans).
func Begin(uses ...config.Secret) (ctx context.Context, stop context.CancelFunc, cfg config.Config, log *slog.Logger) {
	cfg, err := config.FromEnv()
	if err == nil {
		err = cfg.CheckSecrets(uses...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bookonce:", err)
		os.Exit(2)
	}
	log = Logger(cfg, os.Stderr)
	// The workflow cache is the process's, sized when its first worker
	// starts: with `make run` that is the embedded server's own system
	// worker, so it is sized here, before anything starts.
	worker.SetStickyWorkflowCacheSize(cfg.WorkflowCache)
	for _, w := range []string{cfg.DevSecretsWarning(), cfg.ClearDataWarning()} {
		if w != "" {
			log.Warn(w) // names variables, never values
			fmt.Fprintf(os.Stderr, "\n!!! bookonce: %s\n\n", w)
		}
	}
	ctx, stop = SignalContext()
	return ctx, withTracing(ctx, stop, log), cfg, log
}

// TracingFlushTimeout bounds how long a stopping process waits for its
// last spans to reach the collector.
const TracingFlushTimeout = 5 * time.Second

// withTracing sets up the process's tracing (package tracing), named
// bookonce-<command> unless OTEL_SERVICE_NAME says otherwise, and returns
// stop extended by its shutdown. A configured exporter that cannot be
// built ends the process: an operator who asked for traces should not
// find out from their absence.
func withTracing(ctx context.Context, stop context.CancelFunc, log *slog.Logger) context.CancelFunc {
	shutdown, err := tracing.Setup(ctx, "bookonce-"+filepath.Base(os.Args[0]))
	if err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "bookonce:", err)
		os.Exit(2)
	}
	return func() {
		stop()
		flushCtx, cancel := context.WithTimeout(context.Background(), TracingFlushTimeout)
		defer cancel()
		if err := shutdown(flushCtx); err != nil {
			log.Warn("tracing: spans not flushed", "err", err)
		}
	}
}

// Process is what every bookonce command starts with.
type Process struct {
	Config config.Config
	Log    *slog.Logger
	Pool   *pgxpool.Pool
}

// Command is the frame of every bookonce process that uses PostgreSQL:
// Begin with the secrets it uses, then PostgreSQL found or started and
// migrated, and a clear message and exit 1 when body fails.
func Command(name string, uses []config.Secret, body func(ctx context.Context, p Process) error) {
	ctx, stop, cfg, log := Begin(uses...)
	defer stop()
	pool, closeDB, err := Database(ctx, cfg, log)
	if err != nil {
		Fatal(log, "PostgreSQL", err)
	}
	err = body(ctx, Process{Config: cfg, Log: log, Pool: pool})
	closeDB()
	if err != nil && ctx.Err() == nil {
		Fatal(log, name, err)
	}
}

// Serve runs services and background loops until ctx ends or one fails.
func Serve(ctx context.Context, log *slog.Logger, services map[string]web.Service, loops ...func(context.Context)) error {
	g, gctx := errgroup.WithContext(ctx)
	if err := ServeAll(gctx, g, log, services); err != nil {
		return err
	}
	for _, loop := range loops {
		g.Go(func() error { loop(gctx); return nil })
	}
	return g.Wait()
}
