package drill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/postgres"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
)

// env is the stack under test. The drill process hosts what the drill
// observes (the fake Twilio, a fault proxy in front of each downstream,
// and the webhook gateway); what it crashes runs as child processes of
// its own executable (the workers, the calendar and payment APIs, the
// Temporal server) or is a private PostgreSQL cluster it started. In the
// scaled topology the gateways are child processes too, and round-robin
// proxies stand in front of every replicated service.
type env struct {
	opts Options
	// db is shut while the drill keeps PostgreSQL down (dbgate.go).
	db       dbGate
	cfg      config.Config
	pool     *pgxpool.Pool
	adminURL string
	dbName   string
	dbURL    string
	cluster  *postgres.Cluster // nil: a server the drill did not start
	pgDir    string
	temporal *service
	// apis are the replicas of each service the drill runs and kills,
	// by upstream (calendar, payments; gateway in the scaled topology).
	apis map[string][]*service
	// replicaAddrs are the API replicas' addresses, by upstream;
	// gatewayAddrs the gateway replicas' (scaled topology only).
	replicaAddrs map[string][]string
	// adminAddrs are the private listeners of the API replicas that serve
	// their /metrics apart (PAYMENTS_ADMIN_LISTEN, CALENDAR_ADMIN_LISTEN),
	// in replicaAddrs' order; an upstream without serves them on its own.
	adminAddrs   map[string][]string
	gatewayAddrs []gatewayAddrs
	tc           client.Client
	twilio       *twilio.FakeServer
	// cals are the shops' own calendars (shopcals.go); staff enter
	// appointments in them while the customers book (staff.go).
	cals  *shopCals
	staff *staff
	// shops are the drill's tenants by ID (shops.go).
	shops     map[string]tenants.Tenant
	proxies   map[string]*chaos.Proxy
	exchanges *exchangeLog
	gateway   *channels.Gateway
	gwURL     string
	staffURL  string // the gateway's admin listener: review and booking APIs, ops page
	agentURL  string // the agent tools, through their fault proxy
	// agentFront is the round robin over the gateway replicas' agent
	// listeners (scaled topology only).
	agentFront string
	gatherers  []prometheus.Gatherer
	workerEnv  []string
	// changes sends the customers' cancels and moves; nil until the drive.
	changes *changer

	cancel context.CancelFunc
	wg     sync.WaitGroup
	stops  []func()
}

// Upstreams the drill puts a fault proxy in front of.
const (
	upstreamCalendar = "calendar"
	upstreamPayments = "payments"
	upstreamTwilio   = "twilio"
	// upstreamWebhooks is the gateway, as the payment API's webhook
	// deliveries reach it.
	upstreamWebhooks = "webhooks"
)

// startEnv starts the drill's stack: its database, the fake Twilio, the
// Temporal server and API processes, the fault proxies and the gateway.
// On failure it closes what it started.
func startEnv(parent context.Context, opts Options) (_ *env, err error) {
	ctx, cancel := context.WithCancel(parent)
	e := &env{opts: opts, cancel: cancel, proxies: map[string]*chaos.Proxy{}, exchanges: &exchangeLog{},
		apis: map[string][]*service{}}
	defer func() {
		if err != nil {
			e.close(false)
		}
	}()
	e.twilio = twilio.NewFakeServer()
	e.stops = append(e.stops, e.twilio.Close)
	if e.cals, err = e.startShopCalendars(ctx); err != nil {
		return e, err
	}
	if err := e.database(ctx); err != nil {
		return e, err
	}
	opts.progress("database %s", e.dbName)
	addrs, err := freeAddrs(5)
	if err != nil {
		return e, err
	}
	vars := map[string]string{
		"DATABASE_URL": e.dbURL, "TEMPORAL_ADDRESS": addrs[0], "TEMPORAL_NAMESPACE": "default",
		"TWILIO_ACCOUNT_SID": e.twilio.AccountSID, "TWILIO_AUTH_TOKEN": e.twilio.AuthToken,
		"CALENDAR_LISTEN": addrs[1], "PAYMENTS_LISTEN": addrs[2], "PAYMENTS_ADMIN_LISTEN": addrs[3], "CALENDAR_ADMIN_LISTEN": addrs[4],
		"WORKER_LISTEN": "127.0.0.1:0", "AGENT_LISTEN": "127.0.0.1:0", "OUTBOX_SEND_TIMEOUT": "15s", "LOG_FORMAT": "json", "LOG_LEVEL": "warn",
		// The reconciler sweeps within the drill's orphan wait.
		"RECONCILE_INTERVAL": "10s", "RECONCILE_GRACE": "15s",
		// Reminders already due are sent at once (see policy.go).
		"REMINDER_LEAD": drillReminderLead,
	}
	maps.Copy(vars, e.cals.vars)
	if vars["VOICE_PLATFORM_SECRETS"], err = voicePlatformSecrets(); err != nil {
		return e, err
	}
	if opts.Crashes != nil && opts.Crashes.CalendarOutage > 0 {
		// Payment sagas reach their decision bound during the calendar
		// outage (crashes.go).
		vars["PAYMENT_DECISION_TIMEOUT"] = DecisionTimeout(opts.Crashes.CalendarOutage).String()
	}
	// The gateway's address comes first: the payment API's processes
	// deliver their webhooks to it (through a fault proxy) from the start.
	var gwListener net.Listener
	upstreams := map[string]string{upstreamCalendar: "http://" + addrs[1], upstreamPayments: "http://" + addrs[2], upstreamTwilio: e.twilio.URL()}
	e.replicaAddrs = map[string][]string{upstreamCalendar: {addrs[1]}, upstreamPayments: {addrs[2]}}
	e.adminAddrs = map[string][]string{upstreamPayments: {addrs[3]}, upstreamCalendar: {addrs[4]}}
	if opts.Topology == TopologyScaled {
		if upstreams, err = e.frontReplicas(ctx); err != nil {
			return e, err
		}
	} else {
		if gwListener, err = web.Listen("127.0.0.1:0"); err != nil {
			return e, err
		}
		e.stops = append(e.stops, func() { _ = gwListener.Close() })
		e.gwURL = "http://" + gwListener.Addr().String()
		upstreams[upstreamWebhooks] = e.gwURL
	}
	proxied, err := e.startProxies(ctx, upstreams)
	if err != nil {
		return e, err
	}
	if err := paymentLinkVars(vars, opts, proxied); err != nil {
		return e, err
	}
	// Payload keys in the drill's environment reach its own client and
	// gateway as well as the workers, so all encrypt and decode alike.
	for _, k := range []string{payloadcrypt.EnvKeys, payloadcrypt.EnvKeysFile} {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	if opts.SearchLag > 0 && opts.SearchLagShare > 0 {
		// Some payment API incarnations search like Stripe's lagging
		// index: the callers must not take "not found" as proof (services.go).
		vars["PAYMENTS_AUTHORITATIVE_LOOKUP"] = "false"
	}
	e.cfg, err = config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		return e, err
	}
	childEnv := envList(vars)
	if err := e.startServices(ctx, childEnv); err != nil {
		return e, err
	}
	if err := e.dialTemporal(ctx); err != nil {
		return e, err
	}
	if opts.Topology == TopologyScaled {
		if err := e.startGatewayReplicas(ctx, vars, proxied); err != nil {
			return e, err
		}
		e.workerEnv = envList(vars)
		return e, nil
	}
	adminListener, err := web.Listen("127.0.0.1:0")
	if err != nil {
		return e, err
	}
	e.stops = append(e.stops, func() { _ = adminListener.Close() })
	e.staffURL = "http://" + adminListener.Addr().String()
	if err := e.startGateway(ctx, gatewayListeners{gwListener, adminListener}, vars, proxied); err != nil {
		return e, err
	}
	e.workerEnv = envList(vars)
	return e, nil
}

// dialTemporal connects to the drill's Temporal server and registers the
// search attributes the workflows use.
func (e *env) dialTemporal(ctx context.Context) error {
	var err error
	o := e.cfg.TemporalOptions()
	o.Logger = sdklog.NewStructuredLogger(e.opts.Log)
	if e.cfg.PayloadCodec != nil {
		e.cfg.PayloadCodec.Apply(&o)
	}
	if e.tc, err = client.DialContext(ctx, o); err != nil {
		return fmt.Errorf("connect to the Temporal server: %w", err)
	}
	e.stops = append(e.stops, e.tc.Close)
	return workflows.EnsureSearchAttributes(ctx, e.tc, e.cfg.TemporalNamespace)
}

// startServices starts the Temporal server and the two APIs as child
// processes on the addresses of the configuration (fixed for the whole
// drill, so every client reaches the next incarnation after a crash).
func (e *env) startServices(ctx context.Context, env []string) error {
	tdb := filepath.Join(e.opts.LogDir, "temporal.db")
	ports, err := temporalPorts()
	if err != nil {
		return err
	}
	tenv := append(append([]string(nil), env...), temporalDBEnv+"="+tdb, ports)
	e.temporal = newService("temporal", roleTemporal, e.cfg.TemporalAddress, tenv, e.opts,
		temporalReady(e.cfg.TemporalAddress, e.cfg.TemporalNamespace))
	e.stops = append(e.stops, e.temporal.close)
	e.opts.progress("starting the Temporal server process (SQLite %s)", tdb)
	if err := e.temporal.start(ctx); err != nil {
		return err
	}
	for _, a := range []struct{ name, role, listen, admin string }{
		{upstreamCalendar, roleCalendar, "CALENDAR_LISTEN", "CALENDAR_ADMIN_LISTEN"}, {upstreamPayments, rolePayments, "PAYMENTS_LISTEN", "PAYMENTS_ADMIN_LISTEN"},
	} {
		addrs := e.replicaAddrs[a.name]
		for i, addr := range addrs {
			senv := env
			if len(addrs) > 1 { // a replica listens on its own addresses, behind the round robin
				senv = append(append([]string(nil), env...), a.listen+"="+addr)
				if a.admin != "" {
					senv = append(senv, a.admin+"="+e.metricsAddr(a.name, i))
				}
			}
			svc := newService(replicaName(a.name, i, len(addrs)), a.role, addr, senv, e.opts, httpReady(addr))
			svc.metrics = newRemoteGatherer(e.metricsAddr(a.name, i))
			e.apis[a.name] = append(e.apis[a.name], svc)
			e.stops = append(e.stops, svc.close)
			if err := svc.start(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// metricsAddr is where the i-th replica of the upstream name serves its
// /metrics: its admin listener if it has one (the calendar and payment
// APIs' public listeners serve none), else its own address.
func (e *env) metricsAddr(name string, i int) string {
	if admin := e.adminAddrs[name]; i < len(admin) {
		return admin[i]
	}
	return e.replicaAddrs[name][i]
}

// startProxies puts a fault proxy in front of each upstream URL and
// returns the proxies' URLs.
func (e *env) startProxies(ctx context.Context, upstreams map[string]string) (map[string]string, error) {
	opts := e.opts
	rng := mrand.New(mrand.NewPCG(opts.Seed, 0x5eed))
	proxied := map[string]string{}
	for _, up := range []struct {
		name  string
		rules []chaos.Rule
	}{{upstreamCalendar, opts.Calendar}, {upstreamPayments, opts.Payments}, {upstreamTwilio, opts.Twilio}, {upstreamWebhooks, opts.Webhooks}} {
		name := up.name
		p, err := chaos.New(upstreams[name], up.rules, chaos.WithRand(mrand.New(mrand.NewPCG(rng.Uint64(), rng.Uint64()))),
			chaos.WithObserver(func(x chaos.Exchange) { e.exchanges.add(name, x) }))
		if err != nil {
			return nil, fmt.Errorf("%s proxy: %w", name, err)
		}
		e.proxies[name] = p
		if proxied[name], err = e.serveHandler(ctx, p); err != nil {
			return nil, err
		}
	}
	return proxied, nil
}

// paymentLinkVars configures deposits: payment links (the default), paid
// on the hosted page through the payment proxy, with webhooks signed by a
// fresh secret, delivered twice on purpose and through the webhook proxy;
// or the lab's test card.
func paymentLinkVars(vars map[string]string, opts Options, proxied map[string]string) error {
	if opts.CardDeposits {
		vars["DEPOSIT_MODE"] = "card"
		return nil
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	vars["DEPOSIT_MODE"] = "link"
	vars["PAYMENTS_PUBLIC_URL"] = proxied[upstreamPayments]
	vars["STRIPE_WEBHOOK_URL"] = proxied[upstreamWebhooks] + channels.RouteStripe
	vars["STRIPE_WEBHOOK_SECRET"] = "whsec_" + hex.EncodeToString(secret)
	vars["STRIPE_WEBHOOK_DELIVER_TWICE"] = "true"
	return nil
}

func envList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// freeAddrs returns n free loopback addresses, held open together so that
// they differ; the drill's processes bind them again after every kill,
// so they are drawn where no outgoing connection takes a port meanwhile
// (devserver.ListenFree).
func freeAddrs(n int) ([]string, error) {
	var out []string
	for range n {
		l, err := devserver.ListenFree("127.0.0.1")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// pgSettings make the drill's cluster take the drill's connections: five
// processes with a pool of 16 each, plus the processes just killed whose
// sessions the server has not noticed ending yet.
var pgSettings = []string{"max_connections=300"}

// database creates a fresh database for this drill. The drill owns its
// PostgreSQL (a private cluster in a temp dir on a free port) so that it
// may crash it; only where no PostgreSQL binaries are installed, and no
// restart is asked for, does it use the server bookonce finds.
func (e *env) database(ctx context.Context) error {
	switch {
	case postgres.HaveBinaries():
		dir, err := os.MkdirTemp("", "bookonce-drill-pg-")
		if err != nil {
			return err
		}
		e.pgDir = dir
		if e.cluster, err = postgres.StartCluster(ctx, filepath.Join(dir, "postgres"), pgSettings, e.opts.Log); err != nil {
			return fmt.Errorf("the drill's PostgreSQL cluster: %w", err)
		}
		e.adminURL = e.cluster.AdminURL
	case e.opts.Crashes.RestartPostgres:
		return fmt.Errorf("restarting PostgreSQL needs a cluster the drill owns, and initdb/pg_ctl are not installed: %w", postgres.ErrNoServer)
	default:
		if err := e.foundServer(ctx); err != nil {
			return err
		}
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	e.dbName = fmt.Sprintf("bookonce_drill_%s_%s", time.Now().UTC().Format("20060102_150405"), hex.EncodeToString(b))
	var err error
	if e.dbURL, err = postgres.EnsureDatabase(ctx, e.adminURL, e.dbName); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, e.dbURL)
	if err != nil {
		return fmt.Errorf("open drill database: %w", err)
	}
	if e.shops, err = applyDrillTenants(ctx, pool, e.twilio, e.cals); err != nil {
		pool.Close()
		return fmt.Errorf("drill database: %w", err)
	}
	e.pool = pool
	return nil
}

// foundServer uses the server of DATABASE_URL when set, else the one
// bookonce finds or starts (BOOKONCE_DATA_DIR), like every bookonce process.
func (e *env) foundServer(ctx context.Context) error {
	base, err := config.FromEnv()
	if err != nil {
		return err
	}
	if base.DatabaseURL != "" {
		e.adminURL = base.DatabaseURL
		return nil
	}
	srv, err := postgres.FindServer(ctx, postgres.Options{DataDir: base.DataDir})
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	e.stops = append(e.stops, func() { _ = srv.Stop() })
	e.adminURL = srv.AdminURL
	return nil
}

func (e *env) serveHandler(ctx context.Context, h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := web.NewServer(h)
	e.wg.Add(2)
	go func() { defer e.wg.Done(); _ = srv.Serve(l) }()
	go func() { defer e.wg.Done(); <-ctx.Done(); _ = srv.Close() }()
	return "http://" + l.Addr().String(), nil
}

// close stops everything; the database is dropped unless keep is set
// (a failed drill keeps it for the investigation: with a cluster of its
// own, the cluster's directory is kept, stopped).
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
	if e.cluster != nil {
		if err := e.cluster.Stop(); err != nil {
			e.opts.progress("stop the drill's PostgreSQL: %v", err)
		}
		if !keep {
			_ = os.RemoveAll(e.pgDir)
		} else {
			e.opts.progress("the drill's PostgreSQL cluster is kept in %s (start it with pg_ctl -D %s start)", e.cluster.Dir, e.cluster.Dir)
		}
	}
}

// count runs a count query on the drill's database.
func (e *env) count(ctx context.Context, sql string, args ...any) (int, error) {
	var n int
	err := e.pool.QueryRow(ctx, sql, args...).Scan(&n)
	return n, err
}
