package drill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/channels/twilio"
	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/postgres"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/workflows"
)

// env is the stack under test. The drill process hosts what the drill
// observes (PostgreSQL database, embedded Temporal server, the calendar
// and payment APIs, the fake Twilio, a fault proxy in front of each of the
// three, and the webhook gateway); the workers run as separate processes
// so they can be killed for real.
type env struct {
	opts      Options
	cfg       config.Config
	pool      *pgxpool.Pool
	adminURL  string
	dbName    string
	dbURL     string
	temporal  *devserver.Temporal
	tc        client.Client
	twilio    *twilio.FakeServer
	proxies   map[string]*chaos.Proxy
	exchanges *exchangeLog
	gateway   *channels.Gateway
	gwURL     string
	gatherers []prometheus.Gatherer
	workerEnv []string

	cancel context.CancelFunc
	wg     sync.WaitGroup
	stops  []func()
}

// Upstreams the drill puts a fault proxy in front of.
const (
	upstreamCalendar = "calendar"
	upstreamPayments = "payments"
	upstreamTwilio   = "twilio"
)

func startEnv(parent context.Context, opts Options) (_ *env, err error) {
	ctx, cancel := context.WithCancel(parent)
	e := &env{opts: opts, cancel: cancel, proxies: map[string]*chaos.Proxy{}, exchanges: &exchangeLog{}}
	defer func() {
		if err != nil {
			e.close(false)
		}
	}()
	if err := e.database(ctx); err != nil {
		return e, err
	}
	opts.progress("database %s", e.dbName)
	e.temporal, err = devserver.StartTemporal(ctx, devserver.Options{Address: "127.0.0.1:0"})
	if err != nil {
		return e, fmt.Errorf("embedded Temporal server: %w", err)
	}
	e.stops = append(e.stops, func() { _ = e.temporal.Stop() })
	e.twilio = twilio.NewFakeServer()
	e.stops = append(e.stops, e.twilio.Close)

	vars := map[string]string{
		"DATABASE_URL": e.dbURL, "TEMPORAL_ADDRESS": e.temporal.HostPort(), "TEMPORAL_NAMESPACE": e.temporal.Namespace(),
		"TWILIO_ACCOUNT_SID": e.twilio.AccountSID, "TWILIO_AUTH_TOKEN": e.twilio.AuthToken,
		"WORKER_LISTEN": "127.0.0.1:0", "OUTBOX_SEND_TIMEOUT": "15s", "LOG_FORMAT": "json", "LOG_LEVEL": "warn",
	}
	e.cfg, err = config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		return e, err
	}
	if e.tc, err = client.DialContext(ctx, client.Options{HostPort: e.temporal.HostPort(), Namespace: e.temporal.Namespace(),
		Logger: sdklog.NewStructuredLogger(opts.Log)}); err != nil {
		return e, fmt.Errorf("connect to the embedded Temporal server: %w", err)
	}
	e.stops = append(e.stops, e.tc.Close)
	if err := workflows.EnsureSearchAttributes(ctx, e.tc, e.temporal.Namespace()); err != nil {
		return e, err
	}

	calendarSvc, _ := stack.CalendarService(e.cfg, e.pool, opts.Log)
	paymentsSvc, _ := stack.PaymentsService(e.cfg, e.pool, opts.Log)
	calendarURL, err := e.serve(ctx, calendarSvc)
	if err != nil {
		return e, err
	}
	paymentsURL, err := e.serve(ctx, paymentsSvc)
	if err != nil {
		return e, err
	}
	rng := mrand.New(mrand.NewPCG(opts.Seed, 0x5eed))
	proxied := map[string]string{}
	for _, up := range []struct {
		name, url string
		rules     []chaos.Rule
	}{{upstreamCalendar, calendarURL, opts.Calendar}, {upstreamPayments, paymentsURL, opts.Payments}, {upstreamTwilio, e.twilio.URL(), opts.Twilio}} {
		name := up.name
		p, err := chaos.New(up.url, up.rules, chaos.WithRand(mrand.New(mrand.NewPCG(rng.Uint64(), rng.Uint64()))),
			chaos.WithObserver(func(x chaos.Exchange) { e.exchanges.add(name, x) }))
		if err != nil {
			return e, fmt.Errorf("%s proxy: %w", name, err)
		}
		e.proxies[name] = p
		if proxied[name], err = e.serveHandler(ctx, p); err != nil {
			return e, err
		}
	}

	// The gateway verifies signatures against the URL Twilio calls: its own.
	l, err := web.Listen("127.0.0.1:0")
	if err != nil {
		return e, err
	}
	e.gwURL = "http://" + l.Addr().String()
	e.cfg.PublicBaseURL = e.gwURL
	vars["PUBLIC_BASE_URL"] = e.gwURL
	vars["CALENDAR_URL"], vars["PAYMENTS_URL"], vars["TWILIO_API_URL"] = proxied[upstreamCalendar], proxied[upstreamPayments], proxied[upstreamTwilio]
	var gwReg *prometheus.Registry
	e.gateway, gwReg = stack.Gateway(e.cfg, e.pool, e.tc, opts.Log, calendarSvc.Gatherer, paymentsSvc.Gatherer)
	e.gatherers = []prometheus.Gatherer{gwReg, calendarSvc.Gatherer, paymentsSvc.Gatherer}
	svc := stack.GatewayService(e.gateway, gwReg, opts.Log)
	e.wg.Add(2)
	go func() { defer e.wg.Done(); _ = svc.Serve(ctx, l) }()
	go func() { defer e.wg.Done(); e.gateway.RunRelay(ctx, 2*time.Second) }()

	for k, v := range vars {
		e.workerEnv = append(e.workerEnv, k+"="+v)
	}
	return e, nil
}

// database creates a fresh database for this drill on the PostgreSQL
// server bookonce finds (or starts), so the figures count only its rows.
func (e *env) database(ctx context.Context) error {
	// The server of DATABASE_URL when set, else the one bookonce finds or
	// starts (BOOKONCE_DATA_DIR), like every bookonce process.
	base, err := config.FromEnv()
	if err != nil {
		return err
	}
	if base.DatabaseURL != "" {
		e.adminURL = base.DatabaseURL
	} else {
		srv, err := postgres.FindServer(ctx, postgres.Options{DataDir: base.DataDir})
		if err != nil {
			return fmt.Errorf("PostgreSQL: %w", err)
		}
		e.stops = append(e.stops, func() { _ = srv.Stop() })
		e.adminURL = srv.AdminURL
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	e.dbName = fmt.Sprintf("bookonce_drill_%s_%s", time.Now().UTC().Format("20060102_150405"), hex.EncodeToString(b))
	if e.dbURL, err = postgres.EnsureDatabase(ctx, e.adminURL, e.dbName); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, e.dbURL)
	if err != nil {
		return fmt.Errorf("open drill database: %w", err)
	}
	e.pool = pool
	return nil
}

func (e *env) serve(ctx context.Context, svc web.Service) (string, error) {
	l, err := web.Listen("127.0.0.1:0")
	if err != nil {
		return "", err
	}
	e.wg.Add(1)
	go func() { defer e.wg.Done(); _ = svc.Serve(ctx, l) }()
	return "http://" + l.Addr().String(), nil
}

func (e *env) serveHandler(ctx context.Context, h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	e.wg.Add(2)
	go func() { defer e.wg.Done(); _ = srv.Serve(l) }()
	go func() { defer e.wg.Done(); <-ctx.Done(); _ = srv.Close() }()
	return "http://" + l.Addr().String(), nil
}

// close stops everything; the database is dropped unless keep is set
// (a failed drill keeps it for the investigation).
func (e *env) close(keep bool) {
	e.cancel()
	e.wg.Wait()
	if e.pool != nil {
		e.pool.Close()
	}
	if e.dbURL != "" && !keep {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, e.adminURL); err == nil {
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{e.dbName}.Sanitize()+" WITH (FORCE)")
			_ = conn.Close(ctx)
		}
	}
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
}

// count runs a count query on the drill's database.
func (e *env) count(ctx context.Context, sql string, args ...any) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, sql, args...).Scan(&n)
	return n, err
}
