package drill

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/bookonce/bookonce/chaos"
)

// Options configure a drill. Zero values take the defaults of Defaults.
type Options struct {
	// Bookings is how many bookings the customers ask for (a genuine
	// second booking counts as two).
	Bookings int
	// Concurrency is how many customers talk at the same time.
	Concurrency int
	// Topology is how many replicas of each process run: TopologySingle
	// (the default) or TopologyScaled.
	Topology Topology
	// Workers is how many worker processes run at once (0: 2, or 3 in the
	// scaled topology).
	Workers int
	// KillEvery is how often one worker process is SIGKILLed (and a new
	// one started) until every booking has settled.
	KillEvery time.Duration
	// Seed makes the scenario mix and the fault draws repeatable.
	Seed uint64
	// Calendar, Payments and Twilio are the fault rules of the three
	// proxies (nil: the defaults; empty non-nil: no faults).
	Calendar, Payments, Twilio []chaos.Rule
	// Webhooks are the faults between the payment API and the gateway's
	// payment webhook (nil: the defaults; empty non-nil: no faults).
	Webhooks []chaos.Rule
	// Agent are the faults between the drill's AI agents and the agent
	// tools (nil: the defaults; empty non-nil: no faults).
	Agent []chaos.Rule
	// ShopCalendars are the faults between the workers and the shops'
	// own calendars, the same rules at each provider's proxy (nil: the
	// defaults; empty non-nil: no faults).
	ShopCalendars []chaos.Rule
	// Changes is how customers cancel and move their confirmed bookings:
	// ChangesChat (the default: WhatsApp and voice messages), ChangesAPI
	// (the gateway's API) or ChangesOff.
	Changes ChangeMode
	// CancelShare and RescheduleShare are the percent of one-wish
	// scenarios whose customer cancels, or moves, the booking once it is
	// confirmed (0: DefaultChangeShare; negative: none).
	CancelShare, RescheduleShare int
	// RebookShare is the percent whose customer cancels (or moves) and
	// then books the same (or the old) slot again (0: DefaultRebookShare);
	// EarlyCancelShare the percent who cancel while the booking saga runs
	// (0: DefaultEarlyCancelShare). Negative: none.
	RebookShare, EarlyCancelShare int
	// StaleWindowShare is the percent of one-message WhatsApp customers
	// whose WhatsApp window has closed before their booking's messages go
	// out (0: DefaultStaleWindowShare; negative: none; window.go).
	StaleWindowShare int
	// StopShare is the percent of them who write STOPP right after their
	// wish (0: DefaultStopShare; negative: none; optout.go).
	StopShare int
	// SecondShopShare is the percent of simple customers (one wish, no
	// change) who are the second shop's (0: DefaultSecondShopShare;
	// negative: none; shops.go).
	SecondShopShare int
	// SearchLag is how far a lagging payment API's search trails its
	// writes, as Stripe's index does (0: DefaultSearchLag; negative:
	// never); SearchLagShare the percent of payment API incarnations that
	// lag (0: DefaultSearchLagShare; negative: none).
	SearchLag      time.Duration
	SearchLagShare int
	// CardDeposits pays deposits with the lab's test card at once instead
	// of sending payment links that the drill's customers pay on the
	// hosted page (the default).
	CardDeposits bool
	// Crashes are the crashes beyond workers (API processes killed,
	// PostgreSQL and Temporal restarted, a long outage); nil: the
	// defaults of DefaultCrashes; &Crashes{}: none.
	Crashes *Crashes
	// SettleTimeout bounds the wait for every booking to end.
	SettleTimeout time.Duration
	// OrphanWait bounds the wait, after every booking has ended, for the
	// reconciler to sweep holds and authorisations of closed appointments
	// (no wait once there are none).
	OrphanWait time.Duration
	// WorkerCommand builds the command of one child process (a worker, an
	// API, the Temporal server); its environment is added by the drill.
	// Default: this executable again, which must call RunWorkerIfAsked
	// first thing in main (or TestMain).
	WorkerCommand func() *exec.Cmd
	// Screenshot, when set, is where a PNG of the ops page is saved once
	// the drill has settled (needs a local Chromium).
	Screenshot string
	// LogDir receives the child processes' logs (default: a temp dir).
	LogDir string
	// Progress receives one line per phase and a status line every few
	// seconds (nil: none).
	Progress io.Writer
	// Log receives the in-process services' logs (nil: discarded).
	Log *slog.Logger
}

// DefaultCalendarFaults are the calendar proxy's faults in a drill: lost
// answers after commit, gateway errors after commit, requests sent twice,
// connections reset before forwarding, and slow answers.
func DefaultCalendarFaults() []chaos.Rule {
	return []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.DropAfterCommit, Probability: 0.04},
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/holds", Fault: chaos.Duplicate, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/", Fault: chaos.Reset, Probability: 0.02},
		{PathPrefix: "/v1/", Fault: chaos.Delay, Delay: 300 * time.Millisecond, Probability: 0.03},
	}
}

// DefaultPaymentFaults are the payment proxy's faults in a drill.
func DefaultPaymentFaults() []chaos.Rule {
	return []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/payment_intents", Fault: chaos.DropAfterCommit, Probability: 0.04},
		{Method: "POST", PathPrefix: "/v1/payment_intents", Fault: chaos.ErrorAfterCommit, Status: 504, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/payment_intents", Fault: chaos.Duplicate, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/", Fault: chaos.Reset, Probability: 0.02},
		{PathPrefix: "/v1/", Fault: chaos.Delay, Delay: 300 * time.Millisecond, Probability: 0.03},
	}
}

// DefaultTwilioFaults are the Twilio proxy's faults in a drill: lost
// answers, bare 502 and 503 after commit, resets. There is
// no Duplicate: Twilio's message API takes no idempotency key, so a
// request sent twice below bookonce is two messages that no caller can
// prevent; what bookonce must survive is a lost or failed answer.
func DefaultTwilioFaults() []chaos.Rule {
	return []chaos.Rule{
		{Method: "POST", PathPrefix: "/2010-04-01/", Fault: chaos.DropAfterCommit, Probability: 0.03},
		{Method: "POST", PathPrefix: "/2010-04-01/", Fault: chaos.ErrorAfterCommit, Status: 502, Probability: 0.02},
		// A bare 503 (a load balancer's, no Twilio error body) after Twilio
		// accepted the message: it proves nothing, so resending it is a
		// duplicate at the customer's phone.
		{Method: "POST", PathPrefix: "/2010-04-01/", Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.02},
		{Method: "POST", PathPrefix: "/2010-04-01/", Fault: chaos.Reset, Probability: 0.02},
	}
}

// DefaultWebhookFaults are the faults of the payment webhooks: a delivery
// lost before the gateway (the payment API retries), one the gateway
// handled but whose answer was lost or replaced by an error (a
// redelivery), and a delivery sent twice. The payment API also delivers
// every event twice on purpose in a drill.
func DefaultWebhookFaults() []chaos.Rule {
	return []chaos.Rule{
		{Method: "POST", PathPrefix: "/webhooks/", Fault: chaos.Reset, Probability: 0.05},
		{Method: "POST", PathPrefix: "/webhooks/", Fault: chaos.DropAfterCommit, Probability: 0.03},
		{Method: "POST", PathPrefix: "/webhooks/", Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.03},
		{Method: "POST", PathPrefix: "/webhooks/", Fault: chaos.Duplicate, Probability: 0.03},
	}
}

// DefaultShopCalendarFaults are the faults between the workers and the
// shops' own calendars, at each provider's calendar paths (CalDAV's
// collections, Google's Calendar API, Graph's; not the token endpoints):
// a write the provider stored whose answer is lost or replaced by a 503,
// a write sent twice, resets and slow answers. None of these providers
// takes an idempotency key: a write is once because its ID is derived
// from the booking and an unknown outcome is read back.
func DefaultShopCalendarFaults() []chaos.Rule {
	var rules []chaos.Rule
	for _, prefix := range []string{"/werkstatt/", "/calendar/v3/", "/v1.0/"} {
		for _, m := range []string{"PUT", "POST", "PATCH", "DELETE"} {
			rules = append(rules,
				chaos.Rule{Method: m, PathPrefix: prefix, Fault: chaos.DropAfterCommit, Probability: 0.05},
				chaos.Rule{Method: m, PathPrefix: prefix, Fault: chaos.ErrorAfterCommit, Status: 503, Probability: 0.03},
				chaos.Rule{Method: m, PathPrefix: prefix, Fault: chaos.Duplicate, Probability: 0.03})
		}
		rules = append(rules, chaos.Rule{PathPrefix: prefix, Fault: chaos.Reset, Probability: 0.02},
			chaos.Rule{PathPrefix: prefix, Fault: chaos.Delay, Delay: 300 * time.Millisecond, Probability: 0.03})
	}
	return rules
}

// DefaultAgentFaults are the faults of the AI agents' tool calls: a call
// lost before the tools (the platform retries it), one the tools answered
// whose answer was lost or replaced by an error (the platform retries it
// under its key), a call sent twice, and slow answers.
func DefaultAgentFaults() []chaos.Rule {
	return []chaos.Rule{
		{Method: "POST", PathPrefix: "/v1/agent/tools/", Fault: chaos.Reset, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/agent/tools/", Fault: chaos.DropAfterCommit, Probability: 0.05},
		{Method: "POST", PathPrefix: "/v1/agent/tools/", Fault: chaos.ErrorAfterCommit, Status: 502, Probability: 0.03},
		{Method: "POST", PathPrefix: "/v1/agent/tools/", Fault: chaos.Duplicate, Probability: 0.03},
		{PathPrefix: "/v1/agent/tools/", Fault: chaos.Delay, Delay: 300 * time.Millisecond, Probability: 0.03},
	}
}

// withDefaults fills zero values.
func (o Options) withDefaults() Options {
	if o.Bookings <= 0 {
		o.Bookings = 1000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 24
	}
	if o.Topology == "" {
		o.Topology = TopologySingle
	}
	if o.Workers <= 0 {
		o.Workers = 2
		if o.Topology == TopologyScaled {
			o.Workers = scaledWorkers
		}
	}
	if o.KillEvery <= 0 {
		o.KillEvery = 20 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Calendar == nil {
		o.Calendar = DefaultCalendarFaults()
	}
	if o.Payments == nil {
		o.Payments = DefaultPaymentFaults()
	}
	if o.Twilio == nil {
		o.Twilio = DefaultTwilioFaults()
	}
	if o.ShopCalendars == nil {
		o.ShopCalendars = DefaultShopCalendarFaults()
	}
	if o.Webhooks == nil {
		o.Webhooks = DefaultWebhookFaults()
	}
	if o.Agent == nil {
		o.Agent = DefaultAgentFaults()
	}
	if o.Changes == "" {
		o.Changes = ChangesChat
	}
	o.CancelShare, o.RescheduleShare = share(o.CancelShare, DefaultChangeShare), share(o.RescheduleShare, DefaultChangeShare)
	o.RebookShare, o.EarlyCancelShare = share(o.RebookShare, DefaultRebookShare), share(o.EarlyCancelShare, DefaultEarlyCancelShare)
	o.StaleWindowShare, o.StopShare = share(o.StaleWindowShare, DefaultStaleWindowShare), share(o.StopShare, DefaultStopShare)
	o.SecondShopShare = share(o.SecondShopShare, DefaultSecondShopShare)
	if o.Changes == ChangesOff {
		o.CancelShare, o.RescheduleShare, o.RebookShare, o.EarlyCancelShare = 0, 0, 0, 0
	}
	switch {
	case o.SearchLag == 0:
		o.SearchLag = DefaultSearchLag
	case o.SearchLag < 0:
		o.SearchLag = 0
	}
	o.SearchLagShare = share(o.SearchLagShare, DefaultSearchLagShare)
	if o.Crashes == nil {
		o.Crashes = DefaultCrashes()
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 20 * time.Minute
	}
	if o.OrphanWait <= 0 {
		o.OrphanWait = 3 * time.Minute
	}
	if o.WorkerCommand == nil {
		o.WorkerCommand = selfCommand
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// DefaultSearchLag and DefaultSearchLagShare: half the payment API
// incarnations search 30 s behind their writes (Stripe documents up to a
// minute, more during incidents).
const (
	DefaultSearchLag      = 30 * time.Second
	DefaultSearchLagShare = 50
)

// share is a change share with its default (0) and "none" (negative).
func share(pct, def int) int {
	switch {
	case pct == 0:
		return def
	case pct < 0:
		return 0
	}
	return min(pct, 100)
}

func selfCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe)
}

func (o Options) progress(format string, a ...any) {
	fmt.Fprintf(o.Progress, "drill: "+format+"\n", a...)
}
