package stack_test

// What the internet-facing listeners show without a token
// (docs/security.md).

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/idempotency"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/internal/testsupport/temporaltest"
	"github.com/bookonce/bookonce/internal/web"
)

// TestAgentListenerShowsNothingWithoutAToken: the agent listener is
// internet-facing by design. Without a token it serves no metrics (they
// named tenants and volumes, and each scrape queried four tables) and a
// /healthz that says only "ok". Before, both were served in full.
func TestAgentListenerShowsNothingWithoutAToken(t *testing.T) {
	pool := testsupport.Database(t)
	cfg := testsupport.Config(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc := temporaltest.Temporal(t)
	tenants := testsupport.Tenants(t, pool)
	gw, reg := stack.Gateway(cfg, pool, tc, tenants, log)
	tools := stack.Agent(cfg, pool, tc, reg, gw, tenants, log)
	srv := httptest.NewServer(stack.AgentService(tools, gw, log).Mux())
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "no metrics without a token")

	res, err = http.Get(srv.URL + "/healthz")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
	require.Equal(t, map[string]string{"status": "ok"}, got)
}

// TestPublicHealthzChecksOncePerInterval: anonymous /healthz requests on a
// public listener share one check per interval, so a flood of them
// cannot drain the database pool webhooks need. The admin listener
// checks every time.
func TestPublicHealthzChecksOncePerInterval(t *testing.T) {
	for _, c := range []struct {
		public bool
		checks int64
	}{{true, 1}, {false, 20}} {
		var checks atomic.Int64
		svc := web.Service{Name: "gw", Public: c.public, HealthEvery: time.Hour,
			Health: func(context.Context) error { checks.Add(1); return nil }}
		srv := httptest.NewServer(svc.Mux())
		for range 20 {
			res, err := http.Get(srv.URL + "/healthz")
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusOK, res.StatusCode)
		}
		srv.Close()
		require.Equal(t, c.checks, checks.Load(), "public %v", c.public)
	}
}

// TestPaymentsMetricsAreOnlyOnThePrivateListener: the payment API's
// public listener (PAYMENTS_LISTEN, which serves the hosted payment page
// to the internet) serves no /metrics and a /healthz that says only "ok",
// even with a tenant's token; its private listener
// (PAYMENTS_ADMIN_LISTEN) serves the metrics, tenant names included, and
// the detailed /healthz, and no API. Before, the public listener served
// them to anyone. The process is stack.RunPayments, as cmd/payments runs
// it, on loopback listeners.
func TestPaymentsMetricsAreOnlyOnThePrivateListener(t *testing.T) {
	cfg := testsupport.Config(t)
	cfg.PaymentsListen, cfg.PaymentsAdminListen = freeAddr(t), freeAddr(t)
	runPayments(t, cfg, testsupport.Database(t))
	public, admin := "http://"+cfg.PaymentsListen, "http://"+cfg.PaymentsAdminListen
	createPaymentIntent(t, public) // so that the metrics name the demo tenant

	requireMetricsOnlyOnPrivate(t, public, admin, "payments-admin", "/v1/payment_intents")
}

// TestCalendarMetricsAreOnlyOnThePrivateListener: the calendar API's
// public listener (CALENDAR_LISTEN, which a shop's front desk may reach
// across the internet) serves no /metrics and a /healthz that says only
// "ok", even with a tenant's token; its private listener
// (CALENDAR_ADMIN_LISTEN) serves the metrics, tenant names included, and
// the detailed /healthz, and no API. Before, the public listener served
// them to anyone. The process is stack.RunCalendar, as cmd/calendar runs
// it, on loopback listeners.
func TestCalendarMetricsAreOnlyOnThePrivateListener(t *testing.T) {
	cfg := testsupport.Config(t)
	cfg.CalendarListen, cfg.CalendarAdminListen = freeAddr(t), freeAddr(t)
	runAPI(t, "calendar API", stack.RunCalendar, cfg, testsupport.Database(t), cfg.CalendarListen)
	public, admin := "http://"+cfg.CalendarListen, "http://"+cfg.CalendarAdminListen
	start := testsupport.NextWeekdayAfter(t, time.Tuesday, 14, 48*time.Hour)
	_, err := calendar.NewClient(public, config.DefaultAPIToken).CreateHold(context.Background(), "security-test-hold",
		calendar.HoldRequest{Service: "tire-change", Start: start, Customer: "+4915112345678", Reference: "appointment:demo:security-test"})
	require.NoError(t, err) // so that the metrics name the demo tenant

	requireMetricsOnlyOnPrivate(t, public, admin, "calendar-admin", "/v1/bookings")
}

// requireMetricsOnlyOnPrivate requires that the API process's public
// listener (base URL public) serves no /metrics and a bare /healthz, even
// with the demo tenant's token, and that its private listener (admin)
// serves the metrics naming the demo tenant, the detailed /healthz of the
// service adminName, and not the API's apiPath.
func requireMetricsOnlyOnPrivate(t *testing.T, public, admin, adminName, apiPath string) {
	t.Helper()
	code, body := get(t, public+"/metrics")
	require.NotEqual(t, http.StatusOK, code, "no metrics on the public listener")
	require.NotContains(t, body, "# HELP")
	require.NotContains(t, body, `tenant="demo"`)
	code, body = get(t, public+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok"}`, body, "the public /healthz names nothing")

	code, body = get(t, admin+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "bookonce_idempotency_claims_total{")
	require.Contains(t, body, `tenant="demo"`)
	code, body = get(t, admin+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok","service":"`+adminName+`"}`, body)
	code, _ = get(t, admin+apiPath)
	require.Equal(t, http.StatusNotFound, code, "the private listener serves no API")
}

// freeAddr is a loopback address nothing listens on, for a listener the
// code under test binds itself.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := devserver.ListenFree("127.0.0.1")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// runPayments runs the payment API process on cfg's listeners until the
// test ends, and waits until its public listener answers.
func runPayments(t *testing.T, cfg config.Config, pool *pgxpool.Pool) {
	t.Helper()
	runAPI(t, "payment API", stack.RunPayments, cfg, pool, cfg.PaymentsListen)
}

// runAPI runs an API process (stack.RunPayments, stack.RunCalendar) on
// cfg's listeners until the test ends, and waits until its public
// listener, at public, answers.
func runAPI(t *testing.T, name string, run func(context.Context, stack.Process) error, cfg config.Config, pool *pgxpool.Pool, public string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, stack.Process{Config: cfg, Pool: pool, Log: stack.Logger(cfg, testsupport.LogWriter(t))})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	})
	testsupport.Eventually(t, 10*time.Second, name+" listening", func() bool {
		code, _ := get(t, "http://"+public+"/healthz")
		return code == http.StatusOK
	})
}

// createPaymentIntent authorises a deposit through the API at base with
// the demo tenant's token.
func createPaymentIntent(t *testing.T, base string) {
	t.Helper()
	form := "amount=500&currency=eur&capture_method=manual&confirm=true&payment_method=pm_card_visa"
	req, err := http.NewRequest(http.MethodPost, base+"/v1/payment_intents", strings.NewReader(form))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(idempotency.HeaderKey, "security-test-intent")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
}

// get is a GET with the demo tenant's token: its status (0 when nothing
// answers) and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+config.DefaultAPIToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}
