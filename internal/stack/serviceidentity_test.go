package stack_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/servicetoken"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/payments"
	"github.com/bookonce/bookonce/tenants"
)

// serveAPIs serves the calendar and payment APIs as the commands assemble
// them, on reg (which the test reloads, as the processes' watcher does).
func serveAPIs(t *testing.T, cfg config.Config, pool *pgxpool.Pool, reg *tenants.Registry) (calendarURL, paymentsURL string) {
	t.Helper()
	log := stack.Logger(cfg, testsupport.LogWriter(t))
	cal, _ := stack.CalendarService(cfg, pool, reg, log)
	pay, _ := stack.PaymentsService(cfg, pool, reg, log)
	c, p := httptest.NewServer(cal.Mux()), httptest.NewServer(pay.Mux())
	t.Cleanup(c.Close)
	t.Cleanup(p.Close)
	return c.URL, p.URL
}

// TestWorkerActsForAShopAppliedWhileItRuns: the worker holds no shop's
// token (BOOKONCE_API_TOKENS is empty), yet a shop applied while the APIs
// and the worker run gets its slot held and confirmed and its deposit
// authorised and captured at once, under its own tenant, with no restart.
// Before, the worker called the APIs with the shop's plain token from
// BOOKONCE_API_TOKENS, read at start: the new shop's hold failed with "no
// API token for tenant" until every worker was restarted.
func TestWorkerActsForAShopAppliedWhileItRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	cfg.APITokens = nil // the worker is given no shop's token
	reg := testsupport.Tenants(t, pool)
	cfg.CalendarURL, cfg.PaymentsURL = serveAPIs(t, cfg, pool, reg)
	acts := stack.NewActivities(cfg, pool, reg, nil)

	testsupport.TwoTenants(t, pool) // the shop is applied while everything runs
	require.NoError(t, reg.Reload(ctx))

	const ref = "appointment:" + testsupport.LondonTenant + ":applied-later"
	cal, err := acts.Calendar(testsupport.LondonTenant)
	require.NoError(t, err)
	hold, err := cal.CreateHold(ctx, "hold-"+ref, calendar.HoldRequest{
		Service: "mot", Start: testsupport.Slot(t, time.Tuesday, 14), Customer: "+447700900123", Reference: ref,
	})
	require.NoError(t, err, "the new shop's slot is held")
	_, err = cal.ConfirmHold(ctx, "confirm-"+ref, hold.ID)
	require.NoError(t, err)
	gw, err := acts.Payments(testsupport.LondonTenant)
	require.NoError(t, err)
	pi, err := gw.Authorize(ctx, "authorize-"+ref, payments.Authorization{Amount: 1500, Currency: "gbp", Reference: ref,
		Step: activities.DepositStep, PaymentMethod: "pm_card_visa"})
	require.NoError(t, err, "the new shop's deposit is authorised")
	_, err = gw.Capture(ctx, "capture-"+ref, pi.ID)
	require.NoError(t, err)

	// The effects, read from the shop's side: its own booking and charge.
	var bookings, captured int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM calendar_reservations WHERE tenant_id = $1 AND reference = $2 AND status = 'confirmed'`,
		testsupport.LondonTenant, ref).Scan(&bookings))
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(amount_captured), 0) FROM payment_intents WHERE tenant_id = $1 AND metadata->>'booking_reference' = $2`,
		testsupport.LondonTenant, ref).Scan(&captured))
	require.Equal(t, 1, bookings)
	require.Equal(t, 1500, captured)
}

// TestServiceTokensAreBoundToTheirAPIAndTenants: what the worker mints is
// good at the API it was minted for and for a tenant the registry knows;
// the other API, an unknown tenant and a key the APIs were not given are
// refused (401) before anything is read or written.
func TestServiceTokensAreBoundToTheirAPIAndTenants(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	calendarURL, paymentsURL := serveAPIs(t, cfg, pool, testsupport.Tenants(t, pool))
	worker := cfg.ServiceMinter()
	stranger, err := servicetoken.NewMinter(make([]byte, 32))
	require.NoError(t, err)
	mint := func(m *servicetoken.Minter, tenant string, aud servicetoken.Audience) string {
		tok, err := m.Mint(tenant, aud)
		require.NoError(t, err)
		return tok
	}
	cases := []struct {
		name  string
		url   string
		token string
		want  int
	}{
		{"the calendar's token at the calendar", calendarURL + "/v1/bookings?customer=%2B4915112345678", mint(worker, "demo", servicetoken.Calendar), http.StatusOK},
		{"the payment API's token at the payment API", paymentsURL + "/v1/payment_intents", mint(worker, "demo", servicetoken.Payments), http.StatusOK},
		{"the calendar's token at the payment API", paymentsURL + "/v1/payment_intents", mint(worker, "demo", servicetoken.Calendar), http.StatusUnauthorized},
		{"the payment API's token at the calendar", calendarURL + "/v1/bookings?customer=%2B4915112345678", mint(worker, "demo", servicetoken.Payments), http.StatusUnauthorized},
		{"a tenant the registry does not know", calendarURL + "/v1/bookings?customer=%2B4915112345678", mint(worker, "nobody", servicetoken.Calendar), http.StatusUnauthorized},
		{"a key the APIs were not given", calendarURL + "/v1/bookings?customer=%2B4915112345678", mint(stranger, "demo", servicetoken.Calendar), http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode)
		})
	}
}

// TestReconcilerSweepsEveryTenantThereIs: the schedule's sweep covers the
// tenants of the registry when it runs, a shop applied since the worker
// started included. Before, it swept the tenants of the worker's
// BOOKONCE_API_TOKENS, read at start: a new shop's orphaned holds and
// deposits were never repaired.
func TestReconcilerSweepsEveryTenantThereIs(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	reg := testsupport.Tenants(t, pool)
	rec := stack.NewReconciler(stack.NewActivities(cfg, pool, reg, nil), nil, reg)
	require.True(t, stack.ReconcileInput(cfg).AllTenants, "the schedule asks the registry, not the configuration")

	testsupport.TwoTenants(t, pool)
	require.NoError(t, reg.Reload(ctx))
	ids, err := rec.ListTenants(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"demo", testsupport.LondonTenant}, ids)
}
