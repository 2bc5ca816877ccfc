// Command dev runs the whole bookonce stack in one process for local work:
// PostgreSQL (found or started), the embedded Temporal server and Web UI,
// the worker, the webhook gateway and the calendar and payment APIs.
// `make run` starts it; Ctrl-C stops everything cleanly.
package main

import (
	"context"
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

// serve runs the stack until Ctrl-C; a part that cannot start ends the
// process (stack.Fatal).
func serve() {
	ctx, stop, cfg, log := stack.Begin(config.AllSecrets...)
	defer stop()
	cfg, err := wireWebhooks(cfg)
	if err != nil {
		stack.Fatal(log, "payment webhooks", err)
	}
	step := func(msg string) { fmt.Fprintf(os.Stderr, "  … %s\n", msg) }

	step("PostgreSQL")
	pool, closeDB, err := stack.Database(ctx, cfg, log)
	if err != nil {
		stack.Fatal(log, "PostgreSQL", err)
	}
	defer closeDB()
	if err := stack.SeedDemoTenants(ctx, pool, log); err != nil {
		stack.Fatal(log, "PostgreSQL", err)
	}
	uiURL, stopTemporal := startTemporal(ctx, cfg, log, step)
	defer stopTemporal()
	c := dial(ctx, cfg, log)
	defer c.close()

	step("APIs and gateway")
	g, gctx := errgroup.WithContext(ctx)
	tenants, err := stack.LoadTenants(ctx, cfg, pool, log)
	if err != nil {
		stack.Fatal(log, "tenants", err)
	}
	g.Go(func() error { stack.RunTenants(tenants)(gctx); return nil })
	twilioNote, stopTwilio := startServices(gctx, g, cfg, pool, tenants, c, log)
	defer stopTwilio()

	step("worker")
	w, acts := stack.Worker(c.worker, cfg, pool, tenants)
	if err := w.Start(); err != nil {
		stack.Fatal(log, "worker", err)
	}
	defer w.Stop()
	g.Go(func() error { acts.ShopMirror.Run(gctx, cfg.ShopCalendarPoll); return nil })
	if err := stack.EnsureReconcileSchedule(ctx, c.worker, cfg, log); err != nil {
		stack.Fatal(log, "reconciler schedule", err)
	}
	printReady(os.Stderr, cfg, uiURL, twilioNote, tryLine(ctx, cfg, log))

	<-gctx.Done()
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		stack.Fatal(log, "stopped", err)
	}
	fmt.Fprintln(os.Stderr, "bookonce: stopping")
}

// startTemporal starts the embedded server and its Web UI unless
// TEMPORAL_ADDRESS names another cluster; it returns the UI's URL ("" for
// none) and what stops both.
func startTemporal(ctx context.Context, cfg config.Config, log *slog.Logger, step func(string)) (string, func()) {
	if cfg.TemporalAddressSet {
		return "", func() {}
	}
	step("embedded Temporal server (" + cfg.TemporalAddress + ")")
	ts, err := devserver.StartTemporal(ctx, devserver.Options{
		Address: cfg.TemporalAddress, DatabaseFile: filepath.Join(cfg.DataDir, "temporal.db"), Namespace: cfg.TemporalNamespace,
		Sync: devserver.Sync(cfg.TemporalDBSync),
	})
	if err != nil {
		stack.Fatal(log, "embedded Temporal server", err)
	}
	step("Temporal Web UI")
	ui, err := devserver.StartUI(ctx, ts.HostPort(), "127.0.0.1", cfg.TemporalUIPort, cfg.TemporalNamespace, webUIOptions(cfg)...)
	if err != nil {
		stack.Fatal(log, "Temporal Web UI", err)
	}
	return ui.URL(), func() {
		ui.Stop()
		if err := ts.Stop(); err != nil {
			log.Warn("stop the embedded Temporal server", "error", err)
		}
	}
}

// clients are the Temporal clients of the worker and the gateway: each
// has its own, so each /metrics shows its own service's Temporal calls.
type clients struct {
	worker, gateway       client.Client
	workerReg, gatewayReg *prometheus.Registry
}

func dial(ctx context.Context, cfg config.Config, log *slog.Logger) clients {
	c := clients{workerReg: stack.Registry(), gatewayReg: stack.Registry()}
	var err error
	if c.worker, err = stack.Dial(ctx, cfg, log, stack.WithMetrics(c.workerReg)); err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	if c.gateway, err = stack.Dial(ctx, cfg, log, stack.WithMetrics(c.gatewayReg)); err != nil {
		stack.Fatal(log, "Temporal", err)
	}
	saCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := workflows.EnsureSearchAttributes(saCtx, c.worker, cfg.TemporalNamespace); err != nil {
		stack.Fatal(log, "search attributes", err)
	}
	return c
}

func (c clients) close() {
	c.gateway.Close()
	c.worker.Close()
}

// startServices serves the APIs, the gateway and the worker's /metrics,
// and runs the reapers, the relay and the outbox sender in g. It returns
// where messages go and what stops the dev fake of Twilio.
func startServices(ctx context.Context, g *errgroup.Group, cfg config.Config, pool *pgxpool.Pool, tenants *tenants.Registry, c clients, log *slog.Logger) (string, func()) {
	cfg.WebhookLoopback = true // make run: every endpoint a developer registers is on this machine
	calendarSvc, calStore := stack.CalendarService(cfg, pool, tenants, log)
	paymentsSvc, payStore := stack.PaymentsService(cfg, pool, tenants, log)
	workerSvc := stack.WorkerServiceOn(c.workerReg, pool, c.worker, log)
	gw, gwReg := stack.GatewayOn(c.gatewayReg, cfg, pool, c.gateway, tenants, log, calendarSvc.Gatherer, paymentsSvc.Gatherer, workerSvc.Gatherer)
	tools := stack.Agent(cfg, pool, c.gateway, gwReg, gw, tenants, log)
	twilioClient, note, stopFake := stack.Twilio(cfg), "Twilio", func() {}
	gwSvc := stack.GatewayService(gw, gwReg, log)
	if cfg.TwilioAPIURL == "" && cfg.TwilioAuthToken == config.DevTwilioAuthToken {
		client, fake := stack.DevTwilio(cfg, tenants)
		twilioClient, note, stopFake = client, "fake Twilio at "+fake.URL()+" (printed below)", fake.Close
		gwSvc.Handler = fake.Relay(gwSvc.Handler) // the fake sees the messages it would have relayed
		g.Go(func() error { printMessages(ctx, os.Stderr, fake); return nil })
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
		stack.Fatal(log, "listen", err)
	}
	g.Go(func() error { calStore.RunReaper(ctx, stack.ReapEvery); return nil })
	g.Go(func() error { payStore.RunReaper(ctx, stack.ReapEvery); return nil })
	hooks := stack.PaymentsWebhooks(cfg, pool, tenants, log)
	g.Go(func() error { hooks.Run(ctx, stack.DeliverEvery); return nil })
	g.Go(func() error { gw.RunRelay(ctx, stack.RelayEvery); return nil })
	g.Go(func() error { tools.RunReaper(ctx, stack.ReapEvery); return nil })
	sender := stack.OutboxSender(cfg, pool, twilioClient, log)
	stack.ForTenants(sender, tenants)
	g.Go(func() error { return sender.Run(ctx, stack.SendEvery) })
	return note, stopFake
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
