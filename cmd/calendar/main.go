// Command calendar serves the calendar API (holds, bookings, availability)
// with the Idempotency-Key contract on PostgreSQL.
package main

import (
	"context"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
)

func main() {
	stack.Command("calendar API", func(ctx context.Context, p stack.Process) error {
		svc, store := stack.CalendarService(p.Config, p.Pool, p.Log)
		p.Log.Info("calendar API listening", "addr", p.Config.CalendarListen)
		return stack.Serve(ctx, p.Log, map[string]web.Service{p.Config.CalendarListen: svc},
			func(ctx context.Context) { store.RunReaper(ctx, stack.ReapEvery) })
	})
}
