package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// appliedChange is a change the drill sent for a confirmed booking.
type appliedChange struct {
	scenario   Scenario
	wish       Wish
	change     Change
	workflowID string
	// sentAt is when the first message or request left; a cancel is
	// decided between it and its cancellation message.
	sentAt time.Time
	// refused: a reschedule answered 409 slot_unavailable (the booking
	// stays where it was).
	refused bool
	// answer is the last answer (API: "200", "409 not_cancellable";
	// chat: "sent"), unanswered when every try failed.
	answer     string
	unanswered bool
	// phaseSeen is the saga phase the rows showed when an early cancel
	// went out.
	phaseSeen SagaPhase
	// again is what followed a rebook's second wish (rebook.go).
	again rebookAttempt
}

// changer sends the planned changes of confirmed bookings, once each
// booking's lifecycle runs, and remembers what it sent.
type changer struct {
	e     *env
	mode  ChangeMode
	d     *driver
	http  *http.Client
	token string
	seed  uint64

	// early are the scenarios that cancel during the saga (set by plan
	// before anything runs, read-only afterwards).
	early []Scenario

	mu      sync.Mutex
	sent    map[string]*appliedChange // by appointment workflow ID
	done    map[int]*appliedChange    // by scenario ID
	answers map[string]int
	posts   int
	wg      sync.WaitGroup
	sem     chan struct{}
}

func newChanger(e *env, d *driver, mode ChangeMode, seed uint64) *changer {
	token, _ := e.cfg.TokenFor(config.DefaultTenant) // its absence fails every API change, visibly
	return &changer{e: e, mode: mode, d: d, http: d.sim.HTTP, token: token, seed: seed,
		sent: map[string]*appliedChange{}, done: map[int]*appliedChange{}, answers: map[string]int{}, sem: make(chan struct{}, 8)}
}

// plan remembers the scenarios whose change the payer must know of.
func (c *changer) plan(all []Scenario) {
	for _, s := range all {
		if s.Change != nil && s.Change.Kind == CancelEarly {
			c.early = append(c.early, s)
		}
	}
}

// applied reports whether the drill changed the booking of workflowID
// after its confirmation (an early cancel counts once the booking's
// confirmation was told: told says so).
func (c *changer) applied(workflowID string, told bool) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.sent[workflowID]
	return a != nil && (a.change.Kind != CancelEarly || told)
}

// workflowOf is the booking the change of scenario id went to ("" if
// none went out): after a rebook, the wish's intent names the new one.
func (c *changer) workflowOf(id int) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.done[id]; a != nil {
		return a.workflowID
	}
	return ""
}

// list returns the changes sent so far, in scenario order.
func (c *changer) list() []*appliedChange {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*appliedChange, 0, len(c.sent))
	for _, a := range c.sent {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].scenario.ID < out[j].scenario.ID })
	return out
}

// run sends changes as bookings get confirmed, every second until ctx
// ends; the sends themselves last as long as sendCtx (finish waits).
func (c *changer) run(ctx, sendCtx context.Context, all []Scenario) {
	go c.watchEarly(ctx, sendCtx, all)
	every(ctx, time.Second, func() { c.round(sendCtx, all) })
}

// finish sends the changes of bookings confirmed since the last round and
// waits for every change in flight.
func (c *changer) finish(ctx context.Context, all []Scenario) {
	c.round(ctx, all)
	c.wg.Wait()
}

// round starts the sending of every planned change whose booking is
// confirmed (reservation confirmed, confirmation at the customer) and
// whose lifecycle workflow has started.
func (c *changer) round(ctx context.Context, all []Scenario) {
	booked, err := c.e.pairs(ctx, `SELECT b.customer || '|' || b.service || '|' || to_char(b.slot_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), b.workflow_id
		FROM booking_intents b JOIN calendar_reservations r ON r.reference = b.workflow_id AND r.status = 'confirmed'
		JOIN outbox_messages m ON m.reference = b.workflow_id AND m.kind = 'confirmation' AND m.state IN ('sent', 'delivered')`)
	if err != nil {
		return // the next round asks again (PostgreSQL may be restarting)
	}
	for _, s := range all {
		if s.Change == nil || s.Change.Kind == CancelEarly {
			continue
		}
		w := s.Wishes[0]
		wf := booked[wishKey(s.Customer, w.Service, w.Start)]
		c.mu.Lock()
		done := c.done[s.ID] != nil
		c.mu.Unlock()
		if wf == "" || done || !c.lifecycleStarted(ctx, wf) {
			continue
		}
		a := &appliedChange{scenario: s, wish: w, change: *s.Change, workflowID: wf, sentAt: time.Now()}
		c.mu.Lock()
		c.sent[wf], c.done[s.ID] = a, a
		c.mu.Unlock()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			select {
			case c.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-c.sem }()
			c.send(ctx, a)
		}()
	}
}

// lifecycleStarted asks Temporal whether the booking's lifecycle exists:
// a change before it would find nothing to change.
func (c *changer) lifecycleStarted(ctx context.Context, workflowID string) bool {
	_, err := c.e.tc.DescribeWorkflowExecution(ctx, lifecycle.WorkflowID(workflowID), "")
	return err == nil
}

// send delivers one change the way the mode says.
func (c *changer) send(ctx context.Context, a *appliedChange) {
	if whileCancelling(a, time.Now()) {
		c.rebookWhileCancelling(ctx, a)
		return
	}
	c.deliver(ctx, a, func() {})
	if a.change.Kind == Rebook || a.change.Kind == MoveBack {
		c.bookAgain(ctx, a, false)
	}
}

// deliver sends the change; posted runs once every request of it was
// answered by the gateway (before the customer hears back).
func (c *changer) deliver(ctx context.Context, a *appliedChange, posted func()) {
	if c.mode == ChangesChat || a.change.Kind == CancelEarly {
		c.chat(ctx, a, posted)
	} else {
		c.api(ctx, a)
		posted()
	}
}

// chat sends the change as the customer writes or says it: one message
// (WhatsApp or a call), the same by voice and WhatsApp at once, or a
// WhatsApp message Twilio redelivers.
func (c *changer) chat(ctx context.Context, a *appliedChange, posted func()) {
	rng := rand.New(rand.NewPCG(c.seed, uint64(a.scenario.ID)+1<<32))
	s := a.scenario
	s.Redeliveries, s.Concurrent = 0, false
	text := changeText(a.change, a.sentAt)
	switch a.change.Dup {
	case AcrossChannels:
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); c.d.call(ctx, s, text, rng) }()
		go func() {
			defer wg.Done()
			c.d.whatsapp(ctx, s, text, rand.New(rand.NewPCG(c.seed, uint64(a.scenario.ID)+2<<32)))
		}()
		wg.Wait()
	case Redelivered:
		s.Redeliveries, s.Concurrent = 1+a.change.Phrasing%2, a.change.Phrasing%4 < 2
		c.d.whatsapp(ctx, s, text, rng)
	default:
		if changeByCall(a.change) {
			c.d.call(ctx, s, text, rng)
		} else {
			c.d.whatsapp(ctx, s, text, rng)
		}
	}
	posted()
	answer := "sent"
	switch {
	case a.change.Kind.cancels():
		answer = c.confirmLateCancel(ctx, s, a.sentAt, rng)
	case a.change.Kind.moves():
		answer = c.moveAnswer(ctx, a, s)
	}
	// A webhook never accepted counts in the traffic's refused events,
	// which fail the drill; what the conversation made of it is in the
	// rows (changecheck.go).
	c.mu.Lock()
	defer c.mu.Unlock()
	c.posts++
	a.answer = answer
	a.refused = answer == answerAlternatives
	c.answers[a.answer]++
}

// changeReason is the reason the drill's API cancels give.
const changeReason = "chaos drill: the customer cancelled"

// api sends the change through the gateway's API: one request; the same
// request again under its key (redelivered); or two requests under two
// keys at once (the customer's two channels).
func (c *changer) api(ctx context.Context, a *appliedChange) {
	key := fmt.Sprintf("drill-%d-%d-%s", c.seed, a.scenario.ID, a.change.Kind)
	switch a.change.Dup {
	case AcrossChannels:
		var wg sync.WaitGroup
		for _, ch := range []string{"voice", "whatsapp"} {
			wg.Add(1)
			go func() { defer wg.Done(); c.post(ctx, a, key+"-"+ch) }()
		}
		wg.Wait()
	case Redelivered:
		if a.change.Phrasing%2 == 0 {
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); c.post(ctx, a, key) }()
			go func() { defer wg.Done(); c.post(ctx, a, key) }()
			wg.Wait()
		} else {
			c.post(ctx, a, key)
			c.post(ctx, a, key)
		}
	default:
		c.post(ctx, a, key)
	}
}

// Texts of the booking's answer to a move (template booking_rescheduled)
// and of the conversation's alternatives for a taken slot (template
// alternatives), German: the drill tenant's language.
const (
	movedText        = "Ihr Termin ist verschoben"
	alternativesText = "ist leider schon vergeben"
	// answerAlternatives: the new slot was taken; the booking stays (a
	// refusal, not a lost change).
	answerAlternatives = "alternatives"
)

// moveAnswer waits for what the customer hears back about a move: the
// booking's message (moved), the alternatives for a taken slot (refused),
// or, when neither comes, the last other reply, so a move without effect
// says why.
func (c *changer) moveAnswer(ctx context.Context, a *appliedChange, s Scenario) string {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(lateCancelWait)
	last := "sent"
	for {
		for _, m := range c.e.twilio.Messages() {
			if !strings.HasSuffix(m.To, s.Customer) || m.DateCreated.Before(a.sentAt.Add(-time.Second)) {
				continue
			}
			switch {
			case strings.Contains(m.Body, movedText):
				return "moved"
			case strings.Contains(m.Body, alternativesText):
				return answerAlternatives
			default:
				last = "reply: " + m.Body
			}
		}
		select {
		case <-ctx.Done():
			return last
		case <-deadline:
			return last
		case <-tick.C:
		}
	}
}

// confirmLateCancel answers "Ja" when the conversation asks before a
// cancel that keeps the deposit, as the customer would, and returns what
// the customer heard: the cancellation message, the acknowledgement of a
// cancel during the saga, a person's, or nothing within lateCancelWait
// (what happened is judged from the rows, changecheck.go).
func (c *changer) confirmLateCancel(ctx context.Context, s Scenario, since time.Time, rng *rand.Rand) string {
	asked, from := false, 0
	for {
		heard, at := c.await(ctx, s.Customer, since, from, cancelAnswers...)
		from = at + 1
		switch {
		case heard == keptQuestion && !asked:
			asked = true
			c.d.whatsapp(ctx, s, "Ja", rng)
		case heard == keptQuestion:
			// The same cancel by a second channel asked again; the one
			// "Ja" answers both.
		case heard == "":
			return "no answer"
		default:
			return answerOf[heard]
		}
	}
}

// The words of the answers to a cancel (German: the drill tenant's
// language): the question before a cancel that keeps the deposit
// (template cancel_confirm_kept), the booking's cancellation message, the
// acknowledgement of a cancel during the saga (cancel_in_flight) and a
// person's case (cancel_confirmed and its kin: "Ein Mitarbeiter …"; not
// cancel_not_recorded, which names the Stornierungswunsch too but asks
// the customer to write again: no answer the drill may count as handled).
// The cancelled word keeps its full stop: bare "storniert" also stands in
// cancel_several ("welche storniert werden soll") and cancel_not_possible
// ("kann nicht mehr storniert werden"), where nothing was cancelled, and a
// rebook sent on either was rightly answered "already in progress".
const (
	keptQuestion   = "Möchten Sie trotzdem absagen"
	cancelledWord  = "storniert."
	inFlightWords  = "Wir stornieren"
	staffWords     = "Ein Mitarbeiter"
	lateCancelWait = 3 * time.Minute
)

// cancelAnswers are the answers to a cancel in their order of priority
// within one message.
var cancelAnswers = []string{keptQuestion, cancelledWord, inFlightWords, staffWords}
