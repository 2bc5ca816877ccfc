package stack

import (
	"context"

	"github.com/bookonce/bookonce/internal/web"
)

// RunCalendar is the calendar API process: the API on CALENDAR_LISTEN,
// its /metrics and detailed /healthz on CALENDAR_ADMIN_LISTEN and its
// idempotency-key reaper, until ctx ends. cmd/calendar runs it, and the
// chaos drill runs it in a child process it can SIGKILL.
func RunCalendar(ctx context.Context, p Process) error {
	reg, err := LoadTenants(ctx, p.Config, p.Pool, p.Log)
	if err != nil {
		return err
	}
	svc, store := CalendarService(p.Config, p.Pool, reg, p.Log)
	p.Log.Info("calendar API listening", "addr", p.Config.CalendarListen, "admin_addr", p.Config.CalendarAdminListen)
	return Serve(ctx, p.Log, map[string]web.Service{p.Config.CalendarListen: svc, p.Config.CalendarAdminListen: CalendarAdminService(svc)},
		func(ctx context.Context) { store.RunReaper(ctx, ReapEvery) }, RunTenants(reg))
}

// RunPayments is the payment API process: the Stripe-compatible API and
// the hosted payment page on PAYMENTS_LISTEN, its /metrics and detailed
// /healthz on PAYMENTS_ADMIN_LISTEN, its idempotency-key reaper and its
// webhook deliverer, until ctx ends.
// cmd/payments runs it, and the chaos drill runs it in a child process.
func RunPayments(ctx context.Context, p Process) error {
	reg, err := LoadTenants(ctx, p.Config, p.Pool, p.Log)
	if err != nil {
		return err
	}
	svc, store := PaymentsService(p.Config, p.Pool, reg, p.Log)
	webhooks := PaymentsWebhooks(p.Config, p.Pool, reg, p.Log)
	p.Log.Info("payment API listening", "addr", p.Config.PaymentsListen, "admin_addr", p.Config.PaymentsAdminListen)
	return Serve(ctx, p.Log, map[string]web.Service{p.Config.PaymentsListen: svc, p.Config.PaymentsAdminListen: PaymentsAdminService(svc)},
		func(ctx context.Context) { store.RunReaper(ctx, ReapEvery) },
		func(ctx context.Context) { webhooks.Run(ctx, DeliverEvery) }, RunTenants(reg))
}
