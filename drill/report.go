package drill

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/bookonce/bookonce/chaos"
)

// SearchLagReport says how many payment API incarnations searched like
// Stripe's lagging index, and by how much.
type SearchLagReport struct {
	Lag          string `json:"lag"`
	Incarnations int    `json:"incarnations"`
	Lagging      int    `json:"lagging"`
}

// Report is the drill's result: the pilot metrics of the seeds.
type Report struct {
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	Command   string    `json:"command,omitempty"`
	Seed      uint64    `json:"seed"`
	// Topology is the processes the drill ran; Throughput how fast they
	// settled the bookings.
	Topology   TopologyReport `json:"topology"`
	Throughput Throughput     `json:"throughput"`
	Bookings   int            `json:"bookings"`
	Scenarios  map[Kind]int   `json:"scenarios"`
	Traffic    Traffic        `json:"traffic"`
	// Faults injected per proxy and fault; WorkerKills are SIGKILLs.
	Faults         map[string]map[chaos.Fault]int `json:"faults"`
	WorkersStarted int                            `json:"workers_started"`
	WorkerKills    int                            `json:"worker_kills"`
	// Duplicates are duplicate side effects (must be 0), PerThousand the
	// same per 1000 bookings.
	Duplicates  Effects `json:"duplicate_effects"`
	PerThousand Effects `json:"duplicate_effects_per_1000"`
	// DuplicatesBy breaks Duplicates down by check (docs/chaos.md).
	DuplicatesBy Duplicates `json:"duplicate_effects_by_check"`
	// DuplicateExamples name the wishes booked and the texts sent more
	// than once, when there are any.
	DuplicateExamples []string `json:"duplicate_examples,omitempty"`
	// DoubleBooked are resources booked twice for one time (must be 0).
	DoubleBooked DoubleBooked `json:"double_booked"`
	// DecisionWaits are the deposits decided past the payment decision
	// bound (the calendar outage).
	DecisionWaits DecisionWaits `json:"decision_waits"`
	// Contention measures the slots several customers raced for.
	Contention Rivalry `json:"contention"`
	// Operator is what was left for a person; Orphans the holds and
	// authorisations nobody settled (must be 0).
	Operator OperatorLoad `json:"operator_load"`
	Orphans  Orphans      `json:"orphans"`
	// Blocked are duplicates stopped per layer (inbox, idempotency, dedup).
	Blocked         map[string]float64 `json:"duplicates_blocked"`
	KeyReuse        KeyReuse           `json:"key_reuse"`
	UnknownOutcomes Unknowns           `json:"unknown_outcomes"`
	ReviewCases     map[string]Cases   `json:"review_cases"`
	Genuine         Genuine            `json:"genuine_second_bookings"`
	ResultIDs       ResultIDs          `json:"result_ids_stored"`
	Outcomes        Outcomes           `json:"outcomes"`
	// Payments is what the customers did with their payment links (empty
	// with CardDeposits).
	Payments Payments `json:"payments"`
	// Agent is what the AI agents sent to the agent tools and what they
	// were answered.
	Agent AgentTraffic `json:"agent"`
	// Relay is what the callers on ConversationRelay heard.
	Relay RelayTraffic `json:"relay"`
	// Changes are the cancels and moves of confirmed bookings and what
	// they left (refunds, reservations, reminders, messages).
	Changes ChangeReport `json:"changes"`
	// Crashes are the crashes beyond workers, each with its time.
	Crashes []Crash `json:"crashes"`
	// SearchLag is how the payment API's search lagged its writes.
	SearchLag SearchLagReport `json:"search_lag"`
	// ProviderRefused counts, by Twilio error code, the messages the fake
	// Twilio accepted and then failed by its account's rules (63016: free
	// text outside WhatsApp's window): each one a customer never read.
	ProviderRefused map[int]int `json:"provider_refused"`
	// Templates counts the messages that left as an approved WhatsApp
	// template (outside the customer's 24-hour window: a caller's payment
	// link, for one).
	Templates int `json:"whatsapp_templates_sent"`
	// OptOuts are the customers who wrote STOP and what reached them.
	OptOuts OptOuts `json:"opt_outs"`
	// Senders are the messages per shop and those from a wrong number.
	Senders Senders `json:"senders"`
	// ShopCalendars are the bookings in the shops' own calendars.
	ShopCalendars ShopCalendars `json:"shop_calendars"`
	// Deploy is the worker deploy mid-run (nil: none); NonDeterminism
	// counts the workflow tasks the workers' code could not replay.
	Deploy         *DeployReport `json:"deploy,omitempty"`
	NonDeterminism int           `json:"non_determinism_errors"`
	Failures       []string      `json:"failures"`
	Passed         bool          `json:"passed"`
}

// Effects counts side effects in the three downstream systems.
type Effects struct {
	Calendar float64 `json:"calendar"`
	Payment  float64 `json:"payment"`
	Messages float64 `json:"messages"`
}

// Unknowns are requests whose upstream committed while the caller got no
// answer (or a 5xx), and how each ended.
type Unknowns struct {
	Total int            `json:"total"`
	Ended map[string]int `json:"ended"`
	// SecondsToEnd is how long the replayed and reconciled ones stayed
	// unknown (from the lost answer to the answer that settled them).
	SecondsToEnd Spread `json:"seconds_to_end"`
	// Unresolved lists a few unresolved ones ("upstream METHOD path
	// operation"), for the investigation.
	Unresolved []string `json:"unresolved,omitempty"`
}

// Spread is the median and maximum of some durations, in seconds.
type Spread struct {
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
}

// Cases counts review cases of one reason.
type Cases struct {
	Opened   int `json:"opened"`
	Open     int `json:"open"`
	Resolved int `json:"resolved"`
	// SecondsToResolve is the time from opening to a person's decision
	// (in the drill the operator decides at once; in production this is
	// the figure to watch).
	SecondsToResolve Spread `json:"seconds_to_resolve"`
}

// Genuine measures the bookings that must not be merged.
type Genuine struct {
	Scenarios      int     `json:"scenarios"`
	BookedBoth     int     `json:"booked_both"`
	Merged         int     `json:"merged"`
	FalseDedupRate float64 `json:"false_dedup_rate"`
	ReviewedFirst  int     `json:"went_to_review_first"`
	ExpectedMerges int     `json:"same_intent_scenarios"`
	MergedAsExpect int     `json:"same_intent_merged"`
}

// ResultIDs is the share of external effects whose ID is stored on the
// operation that caused them (the saga's state, the outbox row).
type ResultIDs struct {
	Effects int      `json:"effects"`
	Stored  int      `json:"stored"`
	Share   float64  `json:"share"`
	Missing []string `json:"missing,omitempty"`
}

// Outcomes says how every wish ended; Lost must be 0.
type Outcomes struct {
	Confirmed int            `json:"confirmed"`
	Rejected  map[string]int `json:"rejected"`
	InReview  int            `json:"in_review"`
	Lost      int            `json:"lost"`
	LostWhy   []string       `json:"lost_examples,omitempty"`
	// ByKind splits the wishes' outcomes by scenario kind.
	ByKind map[Kind]map[Outcome]int `json:"by_kind"`
}

// spread returns the median and maximum of d (zero when empty).
func spread(d []time.Duration) Spread {
	if len(d) == 0 {
		return Spread{}
	}
	sorted := append([]time.Duration(nil), d...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	round := func(v time.Duration) float64 { return math.Round(v.Seconds()*100) / 100 }
	return Spread{P50: round(sorted[len(sorted)/2]), Max: round(sorted[len(sorted)-1])}
}

func perThousand(n float64, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(n*1000/float64(of)*100) / 100
}

// check fills Failures and Passed: any duplicate, loss, false merge, a
// refused webhook or an unstored result ID fails the drill.
func (r *Report) check() {
	add := func(cond bool, format string, a ...any) {
		if cond {
			r.Failures = append(r.Failures, fmt.Sprintf(format, a...))
		}
	}
	add(r.Duplicates.Calendar > 0, "%v duplicate calendar reservations", r.Duplicates.Calendar)
	add(r.Duplicates.Payment > 0, "%v duplicate payment effects", r.Duplicates.Payment)
	add(r.Duplicates.Messages > 0, "%v duplicate messages", r.Duplicates.Messages)
	add(len(r.DuplicateExamples) > 0, "duplicates: %s", strings.Join(r.DuplicateExamples, "; "))
	add(r.Outcomes.Lost > 0, "%d wishes lost (accepted, but neither confirmed, rejected with a reason, nor in review)", r.Outcomes.Lost)
	add(r.Traffic.Refused > 0, "%d webhooks never accepted", r.Traffic.Refused)
	add(r.Genuine.Merged > 0, "%d genuine second bookings merged away", r.Genuine.Merged)
	add(r.ResultIDs.Stored < r.ResultIDs.Effects, "%d external effects without their ID stored", r.ResultIDs.Effects-r.ResultIDs.Stored)
	add(r.DoubleBooked.Resources > 0, "%d pairs of bookings on one resource at one time", r.DoubleBooked.Resources)
	add(r.DoubleBooked.NotBooked > 0, "%d bookings told to customers but not confirmed in the calendar", r.DoubleBooked.NotBooked)
	add(len(r.Contention.NotOffered) > 0 || r.Contention.Offered < r.Contention.Lost, "%d customers who lost a contended slot were not offered alternatives",
		r.Contention.Lost-r.Contention.Offered)
	add(r.Operator.Share > r.Operator.Limit, "%d tasks for a person (%.1f%% of bookings, limit %.1f%%) other than ambiguous duplicates (%s)",
		r.Operator.NeedPerson, r.Operator.Share*100, r.Operator.Limit*100, strings.Join(r.Operator.Cases, "; "))
	add(r.Orphans.Total() > 0, "%d orphaned effects (holds %d, authorisations %d, unrefunded captures %d, bookings without deposit %d): %v",
		r.Orphans.Total(), r.Orphans.Holds, r.Orphans.Authorisations, r.Orphans.Captures, r.Orphans.BookingsUnpaid, r.Orphans.Examples)
	for _, c := range r.Crashes {
		add(c.Error != "", "%s of %s at %.1fs: %s", c.Kind, c.Target, c.At, c.Error)
	}
	r.Failures = append(r.Failures, r.Changes.failures()...)
	r.Passed = len(r.Failures) == 0
}

// Summary is the report as a few lines for a terminal.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bookings %d in %.0fs (seed %d); %s\n", r.Bookings, r.Seconds, r.Seed, r.Traffic)
	fmt.Fprintf(&b, "topology %s; throughput %s\n", r.Topology, r.Throughput)
	fmt.Fprintf(&b, "scenarios: %s\n", kindLine(r.Scenarios))
	fmt.Fprintf(&b, "agent tools: %s\n", r.Agent)
	fmt.Fprintf(&b, "ConversationRelay: %s\n", r.Relay)
	fmt.Fprintf(&b, "faults injected: %s; worker processes SIGKILLed: %d\n", faultLine(r.Faults), r.WorkerKills)
	if r.Deploy != nil {
		fmt.Fprintf(&b, "deploy: %s\n", r.Deploy)
	}
	if len(r.Crashes) > 0 {
		fmt.Fprintf(&b, "crashes beyond workers: %s\n", crashLine(r.Crashes))
		fmt.Fprintf(&b, "payment API search lagging %s behind its writes in %d of %d incarnations\n", r.SearchLag.Lag, r.SearchLag.Lagging, r.SearchLag.Incarnations)
	}
	fmt.Fprintf(&b, "duplicate effects per 1000: calendar %v, payment %v, messages %v\n", r.PerThousand.Calendar, r.PerThousand.Payment, r.PerThousand.Messages)
	fmt.Fprintf(&b, "duplicate effects by check: %s\n", mapLine(r.DuplicatesBy))
	fmt.Fprintf(&b, "resources double-booked: %d (of %d bookings told to customers; %d told but not booked)\n",
		r.DoubleBooked.Resources, r.DoubleBooked.Told, r.DoubleBooked.NotBooked)
	if r.DecisionWaits.Bound != "" {
		fmt.Fprintf(&b, "deposits captured later than the payment decision bound (%s) after their authorisation: %d\n", r.DecisionWaits.Bound, r.DecisionWaits.Captured)
	}
	fmt.Fprintf(&b, "contended slots: %d, %d rivals: booked %d, lost %d, offered alternatives %d, other %d\n", r.Contention.Slots,
		r.Contention.Rivals, r.Contention.Booked, r.Contention.Lost, r.Contention.Offered, len(r.Contention.Other))
	fmt.Fprintf(&b, "orphans after settling (waited %.0fs for the reconciler): holds %d, authorisations %d, unrefunded captures %d, bookings without deposit %d (owned: %d of appointments still running, %d awaiting a review decision)\n",
		r.Orphans.WaitedSeconds, r.Orphans.Holds, r.Orphans.Authorisations, r.Orphans.Captures, r.Orphans.BookingsUnpaid, r.Orphans.OfRunning, r.Orphans.AwaitingReview)
	r.Changes.summary(&b)
	fmt.Fprintf(&b, "messages refused by the provider's rules: %d %v; sent as approved WhatsApp templates: %d (%d customers wrote more than a day before their messages)\n",
		sumCounts(r.ProviderRefused), r.ProviderRefused, r.Templates, r.Traffic.StaleWindows)
	fmt.Fprintf(&b, "STOP: %d customers, %d recorded, %d reminders held back, %d reminders after the STOP\n",
		r.OptOuts.Customers, r.OptOuts.Recorded, r.OptOuts.Suppressed, r.OptOuts.ToOptedOut)
	fmt.Fprintf(&b, "messages per shop: %s; from another shop's number: %d\n", intLine(r.Senders.Messages), r.Senders.Wrong)
	fmt.Fprintf(&b, "shops' own calendars: events %s; duplicate %d, missing %d, stray %d; staff entered %d, deleted %d; bookings over staff's appointments %d\n",
		intLine(r.ShopCalendars.Events), r.ShopCalendars.Duplicates, r.ShopCalendars.Missing, r.ShopCalendars.Stray,
		r.ShopCalendars.StaffEntered, r.ShopCalendars.StaffDeleted, r.ShopCalendars.OverBusy)
	fmt.Fprintf(&b, "payment links: %d (%s), paid %d, expired %d, could not pay %d\n",
		r.Payments.Links, intLine(r.Payments.ByBehaviour), r.Payments.Paid, r.Payments.Expired, r.Payments.Failed)
	fmt.Fprintf(&b, "duplicates blocked: %s\n", mapLine(r.Blocked))
	fmt.Fprintf(&b, "retries that reused the operation key: %d of %d (%.1f%%; %d with a new key, guarded by the business reference)\n",
		r.KeyReuse.ReusedKey, r.KeyReuse.Retries, r.KeyReuse.Share*100, r.KeyReuse.NewKey)
	fmt.Fprintf(&b, "unknown outcomes: %d, ended: %s; unknown for p50 %.1fs, max %.1fs\n", r.UnknownOutcomes.Total, intLine(r.UnknownOutcomes.Ended),
		r.UnknownOutcomes.SecondsToEnd.P50, r.UnknownOutcomes.SecondsToEnd.Max)
	var cases []string
	for reason, c := range r.ReviewCases {
		line := fmt.Sprintf("%s %d (open %d", reason, c.Opened, c.Open)
		if c.Resolved > 0 {
			line += fmt.Sprintf(", resolved %d in p50 %.1fs, max %.1fs", c.Resolved, c.SecondsToResolve.P50, c.SecondsToResolve.Max)
		}
		cases = append(cases, line+")")
	}
	sort.Strings(cases)
	fmt.Fprintf(&b, "review cases: %s\n", strings.Join(cases, ", "))
	fmt.Fprintf(&b, "genuine second bookings: %d, both booked %d, merged %d (false-dedup rate %v); same-intent scenarios merged %d of %d\n",
		r.Genuine.Scenarios, r.Genuine.BookedBoth, r.Genuine.Merged, r.Genuine.FalseDedupRate, r.Genuine.MergedAsExpect, r.Genuine.ExpectedMerges)
	fmt.Fprintf(&b, "result IDs stored on their operation: %d of %d (%.1f%%)\n", r.ResultIDs.Stored, r.ResultIDs.Effects, r.ResultIDs.Share*100)
	fmt.Fprintf(&b, "outcomes: confirmed %d, rejected %s, in review %d, lost %d\n", r.Outcomes.Confirmed, intLine(r.Outcomes.Rejected), r.Outcomes.InReview, r.Outcomes.Lost)
	fmt.Fprintf(&b, "operator load: %d tasks, %d ambiguous duplicates, %d need a person (%.1f%% of bookings, limit %.1f%%): %s\n", r.Operator.Tasks,
		r.Operator.Ambiguous, r.Operator.NeedPerson, r.Operator.Share*100, r.Operator.Limit*100, intLine(r.Operator.ByReason))
	for _, line := range r.Operator.InReview {
		fmt.Fprintf(&b, "  in review: %s\n", line)
	}
	if r.Passed {
		b.WriteString("PASSED: zero duplicate effects, zero lost requests, zero false merges, zero double bookings, zero orphans, zero double refunds\n")
	} else {
		fmt.Fprintf(&b, "FAILED: %s\n", strings.Join(r.Failures, "; "))
	}
	return b.String()
}

func faultLine(m map[string]map[chaos.Fault]int) string {
	var parts []string
	for _, up := range []string{upstreamCalendar, upstreamPayments, upstreamTwilio, upstreamWebhooks, upstreamAgent, providerCalDAV, providerGoogle, providerMicrosoft} {
		total := 0
		for _, n := range m[up] {
			total += n
		}
		parts = append(parts, fmt.Sprintf("%s %d", up, total))
	}
	return strings.Join(parts, ", ")
}

// kindLine is the scenario count by kind, in Kinds order.
func kindLine(m map[Kind]int) string {
	parts := make([]string, 0, len(Kinds))
	for _, k := range Kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// failures are the agent traffic's findings: a call never answered,
// answers of one agent naming different bookings, a payment link answered
// but never sent to the customer.
func (a AgentTraffic) failures() []string {
	var out []string
	if a.Unanswered > 0 {
		out = append(out, fmt.Sprintf("%d agent tool calls never answered", a.Unanswered))
	}
	if a.Diverging > 0 {
		out = append(out, fmt.Sprintf("%d agents answered with different bookings for one wish", a.Diverging))
	}
	if a.AtTwilio < a.PaymentURLs {
		out = append(out, fmt.Sprintf("%d payment links answered to agents but never sent to the customer", a.PaymentURLs-a.AtTwilio))
	}
	if len(out) > 0 && len(a.Errors) > 0 {
		out = append(out, fmt.Sprintf("agent errors: %v", a.Errors))
	}
	return out
}

func intLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func mapLine(m map[string]float64) string {
	ints := map[string]int{}
	for k, v := range m {
		ints[k] = int(v)
	}
	return intLine(ints)
}
