// Command chaos is bookonce's acceptance drill (`make chaos`): it drives
// many bookings through the whole stack as Twilio would, injects faults in
// front of the calendar, payment and Twilio APIs, SIGKILLs worker
// processes, waits for every booking to settle, prints the pilot metrics
// and writes them as JSON. It exits 1 on any duplicate effect, lost
// request or false merge, 2 on bad flags, 3 when the drill cannot run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// Times in messages are stated in BOOKONCE_TIMEZONE on any host.
	_ "time/tzdata"

	"github.com/bookonce/bookonce/chaos"
	"github.com/bookonce/bookonce/drill"
)

// faultFlags collects -fault "UPSTREAM: RULE" flags.
type faultFlags map[string][]chaos.Rule

func (f faultFlags) String() string { return "" }

func (f faultFlags) Set(v string) error {
	upstream, rule, ok := strings.Cut(v, ":")
	upstream = strings.TrimSpace(upstream)
	if !ok || (upstream != "calendar" && upstream != "payments" && upstream != "twilio" && upstream != "webhooks" && upstream != "agent" && upstream != "shopcal") {
		return errors.New(`want "calendar|payments|twilio|webhooks|agent|shopcal: METHOD PATH FAULT [p=..] [limit=..] [status=..] [delay=..]"`)
	}
	r, err := chaos.ParseRule(strings.TrimSpace(rule))
	if err != nil {
		return err
	}
	f[upstream] = append(f[upstream], r)
	return nil
}

func main() {
	drill.RunWorkerIfAsked() // the drill starts this binary as its workers
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command without the process around it: the exit code, the
// summary on stdout, progress and diagnostics on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	opts, reportPath, code := parseArgs(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := drill.Run(ctx, opts)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "chaos: interrupted; no report")
		return 130
	}
	if err != nil {
		fmt.Fprintln(stderr, "chaos: the drill could not run:", err)
		return 3
	}
	r.Command = "chaos " + strings.Join(args, " ")
	out, err := json.MarshalIndent(r, "", "  ")
	if err == nil {
		err = os.WriteFile(reportPath, append(out, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "chaos: write report:", err)
		return 3
	}
	fmt.Fprint(stdout, r.Summary())
	fmt.Fprintln(stdout, "report:", reportPath)
	if !r.Passed {
		return 1
	}
	return 0
}

// parseArgs reads the drill's options and where its report goes. code is
// -1 when the drill should run, else the exit code: 0 after -h (usage on
// stdout), 2 for a bad command line (the reason and usage on stderr).
func parseArgs(args []string, stdout, stderr io.Writer) (opts drill.Options, reportPath string, code int) {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseArgs decides where usage goes
	faults := faultFlags{}
	var (
		n           = fs.Int("n", 1000, "bookings to drive (a genuine second booking counts as two)")
		concurrency = fs.Int("concurrency", 24, "customers talking at the same time")
		workers     = fs.Int("workers", 2, "worker processes running at once (3 in the scaled topology unless given)")
		topology    = fs.String("topology", string(drill.TopologySingle), `"single": one gateway (in the drill's process), the workers, one calendar and one payment API process; "scaled": two gateway processes, three workers, two calendar and two payment API processes, each kind behind a round-robin proxy, every replica SIGKILLed at random`)
		killEvery   = fs.Duration("kill-every", 20*time.Second, "SIGKILL one worker process this often until every booking has settled")
		seed        = fs.Uint64("seed", 0, "seed of the scenario mix and the fault draws (0: from the clock)")
		settle      = fs.Duration("settle-timeout", 20*time.Minute, "how long to wait for every booking to end")
		orphanWait  = fs.Duration("orphan-wait", 3*time.Minute, "how long to wait, once every booking has ended, for the reconciler to sweep orphaned holds and authorisations")
		report      = fs.String("report", "chaos-report.json", "where to write the JSON report")
		noFaults    = fs.Bool("no-faults", false, "inject no proxy faults (worker kills and the crashes below still happen)")
		logDir      = fs.String("logs", "", "directory for the child processes' logs and the Temporal SQLite file (default: a temp dir)")
		screenshot  = fs.String("screenshot", "", "save a PNG of the ops page here once settled (needs Chromium)")
		deposits    = fs.String("deposits", "link", `"link": customers pay payment links on the hosted page; "card": the lab's test card pays at once`)
		changes     = fs.String("changes", string(drill.ChangesChat), `how customers cancel and move confirmed bookings: "chat" (WhatsApp and voice messages), "api" (the gateway's /v1/appointments/{id}/cancel and /reschedule), "off"`)
		cancels     = fs.Int("cancel-share", drill.DefaultChangeShare, "percent of one-wish customers who cancel their confirmed booking (0: none)")
		moves       = fs.Int("reschedule-share", drill.DefaultChangeShare, "percent of one-wish customers who move their confirmed booking (0: none)")
		rebooks     = fs.Int("rebook-share", drill.DefaultRebookShare, "percent of one-wish customers who cancel or move and then book the same or the old slot again (0: none)")
		lag         = fs.Duration("search-lag", drill.DefaultSearchLag, "how far a lagging payment API's search trails its writes, like Stripe's (0: never)")
		lagShare    = fs.Int("search-lag-share", drill.DefaultSearchLagShare, "percent of payment API incarnations whose search lags (0: none)")
		early       = fs.Int("early-cancel-share", drill.DefaultEarlyCancelShare, "percent of one-wish customers who cancel while the booking saga runs, spread over its phases (0: none)")
		stale       = fs.Int("stale-window-share", drill.DefaultStaleWindowShare, "percent of one-message WhatsApp customers who wrote more than a day before their booking's messages: outside WhatsApp's window (0: none)")
		stops       = fs.Int("stop-share", drill.DefaultStopShare, "percent of one-message WhatsApp customers who write STOPP right after their wish: no reminder may reach them (0: none)")
		shops       = fs.Int("second-shop-share", drill.DefaultSecondShopShare, "percent of one-wish WhatsApp and voice customers who write to and call a second shop with its own numbers: every message must leave from their shop's sender (0: none)")
	)
	crashes := crashFlags(fs)
	fs.Var(faults, "fault", `a fault rule "UPSTREAM: METHOD PATH FAULT [p=..] [limit=..]" replacing that upstream's defaults (repeatable),`+
		` e.g. -fault "calendar: POST /v1/holds drop-after-commit p=0.2"`)
	if err := fs.Parse(args); err != nil {
		return opts, "", usageExit(fs, err, stdout, stderr)
	}
	if *deposits != "link" && *deposits != "card" {
		return opts, "", usageExit(fs, errors.New(`-deposits must be "link" or "card"`), stdout, stderr)
	}
	topo := drill.Topology(*topology)
	if topo != drill.TopologySingle && topo != drill.TopologyScaled {
		return opts, "", usageExit(fs, errors.New(`-topology must be "single" or "scaled"`), stdout, stderr)
	}
	mode := drill.ChangeMode(*changes)
	if mode != drill.ChangesAPI && mode != drill.ChangesChat && mode != drill.ChangesOff {
		return opts, "", usageExit(fs, errors.New(`-changes must be "api", "chat" or "off"`), stdout, stderr)
	}
	if *cancels < 0 || *moves < 0 || *rebooks < 0 || *early < 0 || *cancels+*moves+*rebooks+*early > 100 {
		return opts, "", usageExit(fs, errors.New("-cancel-share, -reschedule-share, -rebook-share and -early-cancel-share are percentages from 0 and add up to at most 100"), stdout, stderr)
	}
	if *stale < 0 || *stops < 0 || *stale+*stops > 100 {
		return opts, "", usageExit(fs, errors.New("-stale-window-share and -stop-share are percentages from 0 and add up to at most 100"), stdout, stderr)
	}
	if *shops < 0 || *shops > 100 {
		return opts, "", usageExit(fs, errors.New("-second-shop-share is a percentage from 0 to 100"), stdout, stderr)
	}
	if *lag < 0 || *lagShare < 0 || *lagShare > 100 {
		return opts, "", usageExit(fs, errors.New("-search-lag must not be negative and -search-lag-share is a percentage from 0 to 100"), stdout, stderr)
	}
	if fs.NArg() > 0 || *n <= 0 || *concurrency <= 0 || *workers <= 0 || *killEvery <= 0 || *settle <= 0 || *orphanWait <= 0 {
		return opts, "", usageExit(fs, errors.New("-n, -concurrency, -workers, -kill-every, -settle-timeout and -orphan-wait must be positive, and there are no arguments"), stdout, stderr)
	}
	c, err := crashes()
	if err != nil {
		return opts, "", usageExit(fs, err, stdout, stderr)
	}
	opts = drill.Options{Bookings: *n, Concurrency: *concurrency, Topology: topo, Workers: *workers, KillEvery: *killEvery,
		Seed: *seed, SettleTimeout: *settle, OrphanWait: *orphanWait, LogDir: *logDir, Screenshot: *screenshot, Progress: stderr, Crashes: c,
		Calendar: faults["calendar"], Payments: faults["payments"], Twilio: faults["twilio"], Webhooks: faults["webhooks"], Agent: faults["agent"], ShopCalendars: faults["shopcal"],
		CardDeposits: *deposits == "card", Changes: mode, CancelShare: shareFlag(*cancels), RescheduleShare: shareFlag(*moves),
		RebookShare: shareFlag(*rebooks), EarlyCancelShare: shareFlag(*early), SearchLag: lagFlag(*lag), SearchLagShare: shareFlag(*lagShare),
		StaleWindowShare: shareFlag(*stale), StopShare: shareFlag(*stops), SecondShopShare: shareFlag(*shops)}
	if topo == drill.TopologyScaled && !flagSet(fs, "workers") {
		opts.Workers = 0 // the topology's
	}
	if *noFaults {
		opts.Calendar, opts.Payments, opts.Twilio, opts.Webhooks, opts.Agent = []chaos.Rule{}, []chaos.Rule{}, []chaos.Rule{}, []chaos.Rule{}, []chaos.Rule{}
		opts.ShopCalendars = []chaos.Rule{}
	}
	return opts, *report, -1
}

// shareFlag turns a share flag into drill.Options' share: 0 means none
// on the command line, while the options read 0 as the default.
// lagFlag maps the flag's "0: never" to the option's.
func lagFlag(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func shareFlag(pct int) int {
	if pct == 0 {
		return -1
	}
	return pct
}

// crashFlags defines the crash flags on fs; the returned function reads
// them once fs is parsed.
func crashFlags(fs *flag.FlagSet) func() (*drill.Crashes, error) {
	def := drill.DefaultCrashes()
	var (
		killAPIs   = fs.Duration("kill-apis", def.APIKillEvery, "SIGKILL the calendar or payment API process (scaled: any calendar, payment API or gateway replica) this often and restart it on its port (0: never)")
		restartPG  = fs.Bool("restart-postgres", def.RestartPostgres, "crash the drill's PostgreSQL once (pg_ctl -m immediate stop) and start it again")
		restartTmp = fs.Bool("restart-temporal", def.RestartTemporal, "SIGKILL the Temporal server process once and start it again on its SQLite file")
		outage     = fs.Duration("outage", def.Outage, "keep one API unreachable this long, once (0: no outage; the step retry budget is about 43s)")
		outageOf   = fs.String("outage-of", def.OutageOf, "the API of the outage: payments or calendar")
		calOutage  = fs.Duration("calendar-outage", def.CalendarOutage, "keep the calendar API down this long, once, before the API outage; the workers' payment decision bound is a third of it (0: none)")
		provOutage = fs.Duration("provider-outage", def.ProviderOutage, "cut every connection to the shops' own calendars (CalDAV, Google, Microsoft) this long, once, first of the one-shot crashes (0: none)")
		pgOutage   = fs.Duration("postgres-outage", def.PostgresOutage, "keep the drill's PostgreSQL down this long, once, after the API outage (pg_ctl -m immediate stop, then start; 0: none)")
		deploy     = fs.Bool("deploy", def.Deploy, "run the workers as a versioned build and deploy a new build mid-run: the new build's workers promote it, the old build's stop once nothing is pinned to it")
	)
	return func() (*drill.Crashes, error) {
		if *killAPIs < 0 || *outage < 0 || *calOutage < 0 || *pgOutage < 0 || *provOutage < 0 || (*outageOf != "payments" && *outageOf != "calendar") {
			return nil, errors.New("-kill-apis, -outage, -calendar-outage, -postgres-outage and -provider-outage must not be negative, -outage-of is payments or calendar")
		}
		c := *def
		c.APIKillEvery, c.RestartPostgres, c.RestartTemporal, c.Outage, c.OutageOf = *killAPIs, *restartPG, *restartTmp, *outage, *outageOf
		c.PostgresOutage, c.CalendarOutage, c.ProviderOutage, c.Deploy = *pgOutage, *calOutage, *provOutage, *deploy
		return &c, nil
	}
}

// usageExit prints the usage where it belongs and returns the exit code:
// asked for (-h), on stdout and 0; a bad command line, with err on stderr
// and 2.
func usageExit(fs *flag.FlagSet, err error, stdout, stderr io.Writer) int {
	w, code := stderr, 2
	if errors.Is(err, flag.ErrHelp) {
		w, code = stdout, 0
	} else {
		fmt.Fprintln(stderr, "chaos:", err)
	}
	fmt.Fprintln(w, "usage: chaos [flags]   (make chaos CHAOS_N=200)")
	fs.SetOutput(w)
	fs.PrintDefaults()
	return code
}

// flagSet says whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
