package stack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"

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
