// Command payments serves the Stripe-compatible payment API (PaymentIntents
// with manual capture, refunds) with the Idempotency-Key contract.
package main

import (
	"context"

	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
)

func main() {
	stack.Command("payment API", func(ctx context.Context, p stack.Process) error {
		svc, store := stack.PaymentsService(p.Config, p.Pool, p.Log)
		p.Log.Info("payment API listening", "addr", p.Config.PaymentsListen)
		return stack.Serve(ctx, p.Log, map[string]web.Service{p.Config.PaymentsListen: svc},
			func(ctx context.Context) { store.RunReaper(ctx, stack.ReapEvery) })
	})
}
