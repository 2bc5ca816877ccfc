// Command dev runs the whole bookonce stack in one process for local work:
// PostgreSQL (found or started), the embedded Temporal server and Web UI,
// the worker, the webhook gateway and the calendar and payment APIs.
// `make run` starts it; Ctrl-C stops everything cleanly.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"
	// Times in messages are stated in BOOKONCE_TIMEZONE on any host, with
	// or without system tzdata.
	_ "time/tzdata"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/bookonce/bookonce/calendar"
	"github.com/bookonce/bookonce/cmd/internal/nextslot"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/devserver"
	"github.com/bookonce/bookonce/internal/stack"
	"github.com/bookonce/bookonce/internal/web"
	"github.com/bookonce/bookonce/tenants"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows"
)

const usage = `usage: dev

Runs the whole bookonce stack in one process (what "make run" starts):
PostgreSQL (found or started), the embedded Temporal server and Web UI,
the worker, the webhook gateway and the calendar and payment APIs.
Ctrl-C stops it. It takes no arguments; every setting is an environment
variable (see docs/configuration.md).
`

// demoCustomer and demoService are what the "Try" line books.
const (
	demoCustomer = "+4915112345678"
	demoService  = "tire-change"
)

func main() {
	if code := checkArgs(os.Args[1:], os.Stdout, os.Stderr); code >= 0 {
		os.Exit(code)
	}
	serve()
}

// checkArgs handles the command line: -1 to run, else the exit code (0
// after -h, with the usage on stdout; 2 for any argument, on stderr).
func checkArgs(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return -1
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "dev: unexpected argument %q\n\n%s", args[0], usage)
	return 2
}

// serve runs the stack until Ctrl-C; a part that cannot start, or that
// stops on its own, ends the process (stack.Fatal) with its name.
func serve() {
	ctx, stop, cfg, log := stack.Begin(config.AllSecrets...)
	defer stop()
	if err := run(ctx, cfg, log, os.Stderr, nil); err != nil {
		var f failure
		if !errors.As(err, &f) {
			f = failure{"stopped", err}
		}
		stack.Fatal(log, f.what, f.err)
	}
}

// failure is a part of the stack that could not start or that stopped
// on its own; what names it in the line make run ends with.
type failure struct {
	what string
	err  error
}

// Error names the part and what went wrong, as the line make run ends with.
func (f failure) Error() string { return f.what + ": " + f.err.Error() }

// Unwrap is the part's own error.
func (f failure) Unwrap() error { return f.err }

// running is what a stack that serves tells whoever started it.
type running struct {
	// twilio is the dev fake of Twilio the outbox sends to, nil when
	// messages go to a real Twilio: a test reads what customers got.
	twilio *twilio.FakeServer
}

// run starts the whole stack on cfg and serves it until ctx ends; it
// returns nil then, or the failure of the part that could not start or
// stopped on its own. Whatever it started is stopped before it returns,
// so that a test can run the stack as make run does. Progress, the
// ready banner and the dev fake's messages go to out; ready, when set,
// is called once everything serves (tests wait for it, not for a port).
func run(ctx context.Context, cfg config.Config, log *slog.Logger, out io.Writer, ready func(running)) error {
	cfg, err := wireWebhooks(cfg)
	if err != nil {
		return failure{"payment webhooks", err}
	}
	s := devStack{cfg: cfg, log: log, out: out}
	s.step("PostgreSQL")
	pool, closeDB, err := stack.Database(ctx, cfg, log)
	if err != nil {
		return failure{"PostgreSQL", err}
	}
	defer closeDB()
	if err := stack.SeedDemoTenants(ctx, pool, log); err != nil {
		return failure{"PostgreSQL", err}
	}
	s.pool = pool
	uiURL, stopTemporal, err := startTemporal(ctx, cfg, log, s.step)
	if err != nil {
		return err
	}
	defer stopTemporal()
	s.uiURL = uiURL
	if s.c, err = dial(ctx, cfg, log); err != nil {
		return err
	}
	defer s.c.close()
	return s.startAndServe(ctx, ready)
}

// devStack is what run has started so far: the parts startAndServe
// starts build on it.
type devStack struct {
	cfg   config.Config
	log   *slog.Logger
	out   io.Writer
	pool  *pgxpool.Pool
	c     clients
	uiURL string
}

// step tells the developer which part starts now, so that a slow start
// shows where it waits.
func (s devStack) step(msg string) { fmt.Fprintf(s.out, "  … %s\n", msg) }

// startAndServe starts the APIs, the gateway and the worker and serves
// them until ctx ends or one of them fails.
func (s devStack) startAndServe(ctx context.Context, ready func(running)) error {
	s.step("APIs and gateway")
	tenants, err := stack.LoadTenants(ctx, s.cfg, s.pool, s.log)
	if err != nil {
		return failure{"tenants", err}
	}
	msgs := newMessaging(s.cfg, tenants)
	if msgs.fake != nil {
		defer msgs.fake.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	// A part that fails to start returns with the others running in g:
	// they stop before the clients and the pool they use are closed.
	defer func() { cancel(); _ = g.Wait() }()
	g.Go(func() error { stack.RunTenants(tenants)(gctx); return nil })
	if err := startServices(gctx, g, s, tenants, msgs); err != nil {
		return err
	}

	s.step("worker")
	w, acts := stack.Worker(s.c.worker, s.cfg, s.pool, tenants)
	if err := w.Start(); err != nil {
		return failure{"worker", err}
	}
	defer w.Stop()
	g.Go(func() error { acts.ShopMirror.Run(gctx, s.cfg.ShopCalendarPoll); return nil })
	if err := stack.EnsureReconcileSchedule(ctx, s.c.worker, s.cfg, s.log); err != nil {
		return failure{"reconciler schedule", err}
	}
	printReady(s.out, s.cfg, s.uiURL, msgs.note, tryLine(ctx, s.cfg, s.log))
	if ready != nil {
		ready(running{twilio: msgs.fake})
	}

	<-gctx.Done()
	// Until the deferred cancel, ctx ends only with the caller's: an error
	// of g while the caller's ctx runs is a part that stopped on its own.
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return failure{"stopped", err}
	}
	// Said before the parts stop, which takes a moment (Temporal's
	// shutdown), so that Ctrl-C is seen to have been heard.
	fmt.Fprintln(s.out, "bookonce: stopping")
	return nil
}

// startTemporal starts the embedded server and its Web UI unless
// TEMPORAL_ADDRESS names another cluster; it returns the UI's URL ("" for
// none) and what stops both.
func startTemporal(ctx context.Context, cfg config.Config, log *slog.Logger, step func(string)) (string, func(), error) {
	if cfg.TemporalAddressSet {
		return "", func() {}, nil
	}
	step("embedded Temporal server (" + cfg.TemporalAddress + ")")
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: cfg.TemporalAddress, DatabaseFile: filepath.Join(cfg.DataDir, "temporal.db"), Namespace: cfg.TemporalNamespace,
		Sync: devserver.Sync(cfg.TemporalDBSync),
	})
	if err != nil {
		// A server that did not come up is left to the process's exit:
		// stopping it can panic (devserver.StartTemporal).
		return "", nil, failure{"embedded Temporal server", err}
	}
	stopServer := func() {
		if err := ts.Stop(); err != nil {
			log.Warn("stop the embedded Temporal server", "error", err)
		}
	}
	step("Temporal Web UI")
	ui, err := devserver.StartUI(ctx, ts.HostPort(), "127.0.0.1", cfg.TemporalUIPort, cfg.TemporalNamespace, webUIOptions(cfg)...)
	if err != nil {
		stopServer()
		return "", nil, failure{"Temporal Web UI", err}
	}
	return ui.URL(), func() { ui.Stop(); stopServer() }, nil
}

// clients are the Temporal clients of the worker and the gateway: each
// has its own, so each /metrics shows its own service's Temporal calls.
type clients struct {
	worker, gateway       client.Client
	workerReg, gatewayReg *prometheus.Registry
}

// dial connects the worker's and the gateway's clients and registers the
// search attributes the workflows set; on a failure it closes what it
// opened.
func dial(ctx context.Context, cfg config.Config, log *slog.Logger) (clients, error) {
	c := clients{workerReg: stack.Registry(), gatewayReg: stack.Registry()}
	var err error
	if c.worker, err = stack.Dial(ctx, cfg, log, stack.WithMetrics(c.workerReg)); err != nil {
		return clients{}, failure{"Temporal", err}
	}
	if c.gateway, err = stack.Dial(ctx, cfg, log, stack.WithMetrics(c.gatewayReg)); err != nil {
		c.worker.Close()
		return clients{}, failure{"Temporal", err}
	}
	saCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := workflows.EnsureSearchAttributes(saCtx, c.worker, cfg.TemporalNamespace); err != nil {
		c.close()
		return clients{}, failure{"search attributes", err}
	}
	return c, nil
}

// close closes both clients.
func (c clients) close() {
	c.gateway.Close()
	c.worker.Close()
}

// messaging is where the outbox sends: Twilio, or with the development
// token and no TWILIO_API_URL an in-process fake of it, so that make run
// works offline and shows what customers would get.
type messaging struct {
	client *twilio.Client
	fake   *twilio.FakeServer // nil with a real Twilio
	note   string             // for the ready banner
}

// newMessaging picks Twilio or the dev fake for cfg.
func newMessaging(cfg config.Config, tenants *tenants.Registry) messaging {
	if cfg.TwilioAPIURL == "" && cfg.TwilioAuthToken == config.DevTwilioAuthToken {
		client, fake := stack.DevTwilio(cfg, tenants)
		return messaging{client: client, fake: fake, note: "fake Twilio at " + fake.URL() + " (printed below)"}
	}
	return messaging{client: stack.Twilio(cfg), note: "Twilio"}
}

// startServices serves the APIs, the gateway and the worker's /metrics,
// and runs the reapers, the relay and the outbox sender in g; with the
// dev fake of Twilio, it prints the messages the fake accepts to s.out.
func startServices(ctx context.Context, g *errgroup.Group, s devStack, tenants *tenants.Registry, msgs messaging) error {
	cfg, c, pool, log := s.cfg, s.c, s.pool, s.log
	cfg.WebhookLoopback = true // make run: every endpoint a developer registers is on this machine
	calendarSvc, calStore := stack.CalendarService(cfg, pool, tenants, log)
	paymentsSvc, payStore := stack.PaymentsService(cfg, pool, tenants, log)
	workerSvc := stack.WorkerServiceOn(c.workerReg, pool, c.worker, log)
	gw, gwReg := stack.GatewayOn(c.gatewayReg, cfg, pool, c.gateway, tenants, log, calendarSvc.Gatherer, paymentsSvc.Gatherer, workerSvc.Gatherer)
	tools := stack.Agent(cfg, pool, c.gateway, gwReg, gw, tenants, log)
	gwSvc := stack.GatewayService(gw, gwReg, log)
	if msgs.fake != nil {
		gwSvc.Handler = msgs.fake.Relay(gwSvc.Handler) // the fake sees the messages it would have relayed
		g.Go(func() error { printMessages(ctx, s.out, msgs.fake); return nil })
	}
	if err := stack.ServeAll(ctx, g, log, map[string]web.Service{
		cfg.GatewayListen:       gwSvc,
		cfg.AdminListen:         stack.AdminService(gw, gwReg, log),
		cfg.AgentListen:         stack.AgentService(tools, gw, log),
		cfg.CalendarListen:      calendarSvc,
		cfg.PaymentsListen:      paymentsSvc,
		cfg.PaymentsAdminListen: stack.PaymentsAdminService(paymentsSvc),
		cfg.CalendarAdminListen: stack.CalendarAdminService(calendarSvc),
		cfg.WorkerListen:        workerSvc,
	}); err != nil {
		return failure{"listen", err}
	}
	g.Go(func() error { calStore.RunReaper(ctx, stack.ReapEvery); return nil })
	g.Go(func() error { payStore.RunReaper(ctx, stack.ReapEvery); return nil })
	hooks := stack.PaymentsWebhooks(cfg, pool, tenants, log)
	g.Go(func() error { hooks.Run(ctx, stack.DeliverEvery); return nil })
	g.Go(func() error { gw.RunRelay(ctx, stack.RelayEvery); return nil })
	g.Go(func() error { tools.RunReaper(ctx, stack.ReapEvery); return nil })
	sender := stack.OutboxSender(cfg, pool, msgs.client, log)
	stack.ForTenants(sender, tenants)
	g.Go(func() error { return sender.Run(ctx, stack.SendEvery) })
	return nil
}

// tryLine is a booking the user can run right now: the next slot that is
// free and in the future, asked of the calendar API that just started. If
// it cannot be asked, the line lets the starter ask instead.
func tryLine(ctx context.Context, cfg config.Config, log *slog.Logger) string {
	start := nextslot.StartNext
	token, ok := cfg.TokenFor(config.DefaultTenant)
	if ok {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := nextslot.Find(ctx, calendar.NewClient(cfg.CalendarURL, token), demoService, demoCustomer, time.Now(), cfg.Timezone)
		if err == nil {
			start = s.Start.Format(time.RFC3339)
		} else {
			log.Warn("no free slot for the example booking", "error", err)
		}
	}
	return fmt.Sprintf("GOTOOLCHAIN=go1.27.3 go run ./cmd/starter book --customer %s --service %s --start %s", demoCustomer, demoService, start)
}

// printReady is the banner that says the stack serves and where.
func printReady(w io.Writer, cfg config.Config, uiURL, twilioNote, try string) {
	fmt.Fprintf(w, "\nbookonce is running (Ctrl-C stops it)\n")
	if uiURL != "" {
		fmt.Fprintf(w, "  Temporal Web UI  %s/namespaces/%s/workflows\n", uiURL, cfg.TemporalNamespace)
	}
	fmt.Fprintf(w, "  Temporal gRPC    %s (namespace %s)\n", cfg.TemporalAddress, cfg.TemporalNamespace)
	fmt.Fprintf(w, "  Gateway          http://%s   (webhooks, /healthz)\n", cfg.GatewayListen)
	fmt.Fprintf(w, "  Admin            http://%s   (review and booking APIs, /metrics, /healthz)\n", cfg.AdminListen)
	fmt.Fprintf(w, "  Ops page         http://%s/ops   (sign in with a token from BOOKONCE_API_TOKENS)\n", cfg.AdminListen)
	fmt.Fprintf(w, "  Calendar API     http://%s   (Authorization: Bearer <token from BOOKONCE_API_TOKENS>; /metrics, /healthz on http://%s)\n", cfg.CalendarListen, cfg.CalendarAdminListen)
	fmt.Fprintf(w, "  Payment API      http://%s   (/metrics, /healthz on http://%s)\n", cfg.PaymentsListen, cfg.PaymentsAdminListen)
	fmt.Fprintf(w, "  Agent tools      MCP http://%s/mcp, HTTP http://%s/v1/agent/tools   (Authorization: Bearer <token>)\n", cfg.AgentListen, cfg.AgentListen)
	fmt.Fprintf(w, "  Messages         outbox -> %s\n", twilioNote)
	fmt.Fprintf(w, "  Deposits         %s\n", depositNote(cfg))
	fmt.Fprintf(w, "  Payloads         %s\n", payloadNote(cfg))
	fmt.Fprintf(w, "\nTry: %s\n\n", try)
}

// webUIOptions configure the Web UI: with payload keys, it decodes
// through the gateway's codec server.
func webUIOptions(cfg config.Config) []devserver.UIOption {
	if cfg.PayloadCodec == nil {
		return nil
	}
	return []devserver.UIOption{devserver.WithCodec(stack.CodecEndpoint(cfg))}
}

// payloadNote says whether Temporal payloads and the personal data in
// PostgreSQL are stored in clear.
func payloadNote(cfg config.Config) string {
	if cfg.PayloadCodec == nil {
		return "in clear in Temporal and PostgreSQL (set BOOKONCE_PAYLOAD_KEYS to encrypt; docs/privacy.md)"
	}
	return "encrypted with key " + cfg.PayloadCodec.CurrentKeyID() + " in Temporal and PostgreSQL; the Web UI decodes them while you are signed in to the ops page"
}
