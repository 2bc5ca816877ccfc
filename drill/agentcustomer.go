package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/twilio"
)

// agentSlotTexts are the slot as an agent passes on what the customer
// said, instead of RFC 3339; every one must resolve to the wish's start
// (TestPhrasingsAreUnderstood).
var agentSlotTexts = []func(t time.Time) string{
	func(t time.Time) string { return fmt.Sprintf("%s, %s um %d Uhr", germanWeekday(t), date(t), t.Hour()) },
	func(t time.Time) string { return fmt.Sprintf("am %s um %02d:00", date(t), t.Hour()) },
}

func germanWeekday(t time.Time) string {
	return [...]string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}[t.Weekday()]
}

// The follow-ups an agent makes after its first book_appointment call,
// drawn per scenario from its seeded fields.
const (
	followNone     = "none"      // it read the answer
	followSameKey  = "same_key"  // the platform lost the answer and repeats the call (same tool-call ID)
	followNewKey   = "new_key"   // the model re-planned: a new call (new key; a new operation if it had one)
	followParallel = "parallel"  // two calls fired at once, each with its own key
	followRephrase = "rephrased" // the same slot in the other form (phrase vs RFC 3339), new key
)

// agentPlan is what one agent scenario does, derived from the scenario's
// seeded fields so that the mix is the seed's.
type agentPlan struct {
	follow       string
	phraseFirst  bool // the first call names the slot in words
	useOperation bool // the agent asks begin_operation first
}

func planOf(s Scenario) agentPlan {
	follows := []string{followSameKey, followNewKey, followParallel, followRephrase}
	p := agentPlan{follow: follows[(s.Phrasing/2)%len(follows)], phraseFirst: s.Phrasing%2 == 1, useOperation: s.Concurrent}
	if s.Redeliveries == 0 {
		p.follow = followNone
	}
	return p
}

// AgentTraffic counts what the drill's AI agents sent to the tools.
type AgentTraffic struct {
	// Calls are book_appointment calls (distinct Idempotency-Keys); Posts
	// all HTTP requests to the tools (begin_operation and get_booking
	// included), the retries of a call under its key included.
	Calls int `json:"calls"`
	Posts int `json:"posts"`
	// KeyRetries are posts repeated under the same key because the answer
	// was lost or was an error (as a platform retries a tool call).
	KeyRetries int `json:"key_retries"`
	// Replayed are answers the idempotency layer replayed (the
	// Idempotent-Replayed header).
	Replayed int `json:"replayed"`
	// Follows counts the scenarios by what the agent did after its first
	// call (none, same_key, new_key, parallel, rephrased); Operations how
	// many agents booked under an operation from begin_operation.
	Follows    map[string]int `json:"follows"`
	Operations int            `json:"operations"`
	// Doors counts the scenarios by the door their agent called: "http"
	// (the HTTP door under Idempotency-Keys) or a voice platform's route
	// (vapi, retell, elevenlabs); Interrupted the platform deliveries the
	// caller cut short by talking over the agent (voiceagent.go).
	Doors       map[string]int `json:"doors"`
	Interrupted int            `json:"interrupted"`
	// PostsByStatus counts every post by HTTP status ("transport" when no
	// answer came back); AnswersByStatus every call's final answer by the
	// tool's status ("unanswered" when no answer came after every retry).
	PostsByStatus   map[string]int `json:"posts_by_status"`
	AnswersByStatus map[string]int `json:"answers_by_status"`
	// Unanswered are calls with no answer after every retry; Diverging
	// are scenarios whose answers named different workflows (both fail
	// the drill).
	Unanswered int      `json:"unanswered"`
	Diverging  int      `json:"diverging"`
	Errors     []string `json:"errors,omitempty"`
	// PaymentURLs are the distinct payment links the answers carried;
	// AtTwilio how many of them the customer was also sent (the rest fail
	// the drill: the link message goes out through the outbox).
	PaymentURLs int `json:"payment_urls"`
	AtTwilio    int `json:"payment_urls_at_twilio"`
	// Polls are get_booking calls of agents whose booking answer was
	// pending; Learnt counts the agents by the last status they were told
	// (pending: still open when the agent stopped asking, agentPollFor).
	Polls  int            `json:"get_booking_polls"`
	Learnt map[string]int `json:"learnt_by_status"`
}

func (a AgentTraffic) String() string {
	return fmt.Sprintf("%d booking calls through %s, %d posts (%d retried, %d replayed, %d cut short by the caller), follow-ups %s; answers %s; "+
		"%d get_booking polls, agents learnt %s; payment links answered %d, sent to the customer %d",
		a.Calls, intLine(a.Doors), a.Posts, a.KeyRetries, a.Replayed, a.Interrupted, intLine(a.Follows), intLine(a.AnswersByStatus),
		a.Polls, intLine(a.Learnt), a.PaymentURLs, a.AtTwilio)
}

// agentCustomer plays AI agents calling the tools through the agent
// fault proxy: at the HTTP door, or as a voice platform's tool calls.
type agentCustomer struct {
	db         *dbGate
	url, token string
	http       *http.Client
	voice      platformFakes

	mu      sync.Mutex
	traffic AgentTraffic
	links   map[string]bool
}

// newAgentCustomer calls the tools at url with the tenant's token; the
// voice platforms sign with keys (VOICE_PLATFORM_SECRETS' of the tenant).
func newAgentCustomer(url, token string, keys platformKeys, tr http.RoundTripper, db *dbGate) *agentCustomer {
	return &agentCustomer{db: db, url: url, token: token, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}, links: map[string]bool{},
		voice: newPlatformFakes(url, token, keys, tr),
		traffic: AgentTraffic{Follows: map[string]int{}, PostsByStatus: map[string]int{}, AnswersByStatus: map[string]int{}, Learnt: map[string]int{},
			Doors: map[string]int{}}}
}

// book plays one agent scenario: the first book_appointment call and the
// follow-up its plan names. Every answer must name the same booking.
func (c *agentCustomer) book(ctx context.Context, s Scenario, rng *rand.Rand) {
	p := planOf(s)
	door := doorOf(s)
	c.count(func(t *AgentTraffic) {
		t.Follows[p.follow]++
		t.Doors[string(door)]++
		if p.useOperation && door == doorHTTP { // voice platforms name the operation by their call IDs
			t.Operations++
		}
	})
	if door != doorHTTP {
		c.bookByVoice(ctx, s, p, door, rng)
		return
	}
	w := s.Wishes[0]
	in := agent.BookInput{Customer: s.Customer, Service: w.Service, Start: slotText(w.Start, p.phraseFirst, s.Phrasing)}
	if p.useOperation {
		in.OperationID = c.operation(ctx, rng)
	}
	key := newCallID(rng)
	answers := []agent.BookingAnswer{c.call(ctx, key, in)}
	second := in
	switch p.follow {
	case followSameKey:
		answers = append(answers, c.call(ctx, key, in))
	case followNewKey:
		if p.useOperation {
			second.OperationID = c.operation(ctx, rng)
		}
		answers = append(answers, c.call(ctx, newCallID(rng), second))
	case followParallel:
		var wg sync.WaitGroup
		var other agent.BookingAnswer
		k2 := newCallID(rng)
		wg.Add(1)
		go func() { defer wg.Done(); other = c.call(ctx, k2, in) }()
		answers = append(answers, c.call(ctx, newCallID(rng), in))
		wg.Wait()
		answers = append(answers, other)
	case followRephrase:
		second.Start = slotText(w.Start, !p.phraseFirst, s.Phrasing)
		answers = append(answers, c.call(ctx, newCallID(rng), second))
	}
	answers = append(answers, c.follow(ctx, latest(answers), c.getBooking(rng)))
	c.compare(s, answers)
}

// getBooking asks get_booking at the HTTP door, a new key per call.
func (c *agentCustomer) getBooking(rng *rand.Rand) func(context.Context, string) (agent.BookingAnswer, bool) {
	return func(ctx context.Context, id string) (agent.BookingAnswer, bool) {
		var got agent.BookingAnswer
		_, ok := c.post(ctx, string(agent.ToolGetBooking), newCallID(rng), agent.GetBookingInput{ID: id}, &got)
		return got, ok
	}
}

// agentPollFor and agentPollEvery bound how long an agent asks get_booking
// about a pending booking: long enough for a link to be paid on a busy
// drill, short enough not to hold a customer's slot in the driver long.
const (
	agentPollFor   = 45 * time.Second
	agentPollEvery = 2 * time.Second
)

// follow asks get_booking (through ask, at the agent's door), as the
// pending answer tells the agent to, until the booking is no longer
// pending or agentPollFor has passed, and returns the last answer (last
// itself if there was nothing to ask).
func (c *agentCustomer) follow(ctx context.Context, last agent.BookingAnswer, ask func(context.Context, string) (agent.BookingAnswer, bool)) agent.BookingAnswer {
	deadline := time.Now().Add(agentPollFor)
	for last.Status == agent.StatusPending && last.WorkflowID != "" && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return last
		case <-time.After(agentPollEvery):
		}
		got, ok := ask(ctx, last.WorkflowID)
		c.count(func(t *AgentTraffic) { t.Polls++ })
		if ok && got.Status != "" {
			last = got
		}
	}
	learnt := string(last.Status)
	if learnt == "" {
		learnt = "unanswered"
	}
	c.count(func(t *AgentTraffic) { t.Learnt[learnt]++ })
	return last
}

// latest is the last answer with a booking status (the zero answer if
// none came).
func latest(answers []agent.BookingAnswer) agent.BookingAnswer {
	for i := len(answers) - 1; i >= 0; i-- {
		if answers[i].Status != "" {
			return answers[i]
		}
	}
	return agent.BookingAnswer{}
}

// slotText names a start as RFC 3339 or in words.
func slotText(t time.Time, words bool, n int) string {
	if words {
		return agentSlotTexts[n%len(agentSlotTexts)](t)
	}
	return t.Format(time.RFC3339)
}

// newCallID is a tool-call ID as a platform makes one (seeded).
func newCallID(rng *rand.Rand) string { return fmt.Sprintf("call_%016x", rng.Uint64()) }

// compare checks that every answered call named one workflow and
// remembers the payment links answered.
func (c *agentCustomer) compare(s Scenario, answers []agent.BookingAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := ""
	for _, a := range answers {
		if a.PaymentURL != "" && !c.links[a.PaymentURL] {
			c.links[a.PaymentURL] = true
			c.traffic.PaymentURLs++
		}
		if a.WorkflowID == "" {
			continue
		}
		if seen != "" && a.WorkflowID != seen {
			c.traffic.Diverging++
			c.errorf("scenario %d: answers name %s and %s", s.ID, seen, a.WorkflowID)
			return
		}
		seen = a.WorkflowID
	}
}

// errorf records an error (under c.mu), at most ten.
func (c *agentCustomer) errorf(format string, a ...any) {
	if len(c.traffic.Errors) < 10 {
		c.traffic.Errors = append(c.traffic.Errors, fmt.Sprintf(format, a...))
	}
}

func (c *agentCustomer) count(f func(*AgentTraffic)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.traffic)
}

// operation asks begin_operation for an operation ID ("" if none came:
// the agent then books without one, which the tools allow).
func (c *agentCustomer) operation(ctx context.Context, rng *rand.Rand) string {
	var out agent.OperationOutput
	if _, ok := c.post(ctx, string(agent.ToolBeginOperation), newCallID(rng), struct{}{}, &out); !ok {
		return ""
	}
	return out.OperationID
}

// call is one book_appointment tool call: posted under key until an
// answer comes back, as a platform retries a call whose answer it lost.
func (c *agentCustomer) call(ctx context.Context, key string, in agent.BookInput) agent.BookingAnswer {
	var a agent.BookingAnswer
	status, ok := c.post(ctx, string(agent.ToolBookAppointment), key, in, &a)
	c.answered(key, status, ok, a)
	return a
}

// answered counts one book_appointment call by its final answer: none
// after every retry (ok false, status the last seen), a refusal without
// a booking status, or the booking's status.
func (c *agentCustomer) answered(key, status string, ok bool, a agent.BookingAnswer) {
	c.count(func(t *AgentTraffic) {
		t.Calls++
		switch {
		case !ok:
			t.Unanswered++
			t.AnswersByStatus["unanswered"]++
			c.errorf("%s %s: no answer after %d tries (last %s)", agent.ToolBookAppointment, key, agentAttempts, status)
		case a.Status == "":
			t.AnswersByStatus["refused_"+status]++
		default:
			t.AnswersByStatus[string(a.Status)]++
		}
	})
}

// snapshot returns the counts, with the answered payment links checked
// against the messages at the fake Twilio.
func (c *agentCustomer) snapshot(tw *twilio.FakeServer) AgentTraffic {
	sent := map[string]bool{}
	for _, m := range tw.Messages() {
		for _, l := range payLink.FindAllString(m.Body, -1) {
			sent[sessionOf(l)] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.traffic
	t.Follows, t.PostsByStatus, t.AnswersByStatus = copyCounts(t.Follows), copyCounts(t.PostsByStatus), copyCounts(t.AnswersByStatus)
	t.Learnt, t.Doors = copyCounts(t.Learnt), copyCounts(t.Doors)
	t.Errors = append([]string(nil), t.Errors...)
	t.AtTwilio = 0
	for l := range c.links {
		if sent[sessionOf(l)] {
			t.AtTwilio++
		} else if len(t.Errors) < 10 {
			t.Errors = append(t.Errors, "payment link answered but never sent to the customer: "+sessionOf(l))
		}
	}
	return t
}

// sessionOf is the checkout session ID of a payment link (the hosts of
// the answer's and the message's link may differ).
func sessionOf(link string) string { return sessionID.FindString(link) }

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sessionID finds a checkout session's ID in a payment link.
var sessionID = regexp.MustCompile(`cs_[A-Za-z0-9_]+`)
