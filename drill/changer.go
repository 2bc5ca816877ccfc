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
	"github.com/bookonce/bookonce/workflows"
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

	mu      sync.Mutex
	sent    map[string]*appliedChange // by appointment workflow ID
	answers map[string]int
	posts   int
	wg      sync.WaitGroup
	sem     chan struct{}
}

func newChanger(e *env, d *driver, mode ChangeMode, seed uint64) *changer {
	token, _ := e.cfg.TokenFor(config.DefaultTenant) // its absence fails every API change, visibly
	return &changer{e: e, mode: mode, d: d, http: d.sim.HTTP, token: token, seed: seed,
		sent: map[string]*appliedChange{}, answers: map[string]int{}, sem: make(chan struct{}, 8)}
}

// applied reports whether the drill changed the booking of workflowID.
func (c *changer) applied(workflowID string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[workflowID] != nil
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
		if s.Change == nil {
			continue
		}
		w := s.Wishes[0]
		wf := booked[wishKey(s.Customer, w.Service, w.Start)]
		if wf == "" || c.applied(wf) || !c.lifecycleStarted(ctx, wf) {
			continue
		}
		a := &appliedChange{scenario: s, wish: w, change: *s.Change, workflowID: wf, sentAt: time.Now()}
		c.mu.Lock()
		c.sent[wf] = a
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
	_, err := c.e.tc.DescribeWorkflowExecution(ctx, workflows.BookingWorkflowID(workflowID), "")
	return err == nil
}

// send delivers one change the way the mode says.
func (c *changer) send(ctx context.Context, a *appliedChange) {
	if c.mode == ChangesChat {
		c.chat(ctx, a)
		return
	}
	c.api(ctx, a)
}

// chat sends the change as the customer writes or says it: one message
// (WhatsApp or a call), the same by voice and WhatsApp at once, or a
// WhatsApp message Twilio redelivers.
func (c *changer) chat(ctx context.Context, a *appliedChange) {
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
		if a.change.Phrasing%2 == 0 {
			c.d.call(ctx, s, text, rng)
		} else {
			c.d.whatsapp(ctx, s, text, rng)
		}
	}
	answer := "sent"
	switch a.change.Kind {
	case Cancel:
		c.confirmLateCancel(ctx, s, rng)
	case Reschedule:
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

// keptQuestion is in the conversation's question before a cancel that
// keeps the deposit (template cancel_confirm_kept, German: the drill
// tenant's language); cancelledWord in the booking's cancellation message.
const (
	keptQuestion   = "Möchten Sie trotzdem absagen"
	cancelledWord  = "storniert"
	lateCancelWait = 3 * time.Minute
)

// confirmLateCancel answers "Ja" when the conversation asks before a
// cancel that keeps the deposit, as the customer would; a cancel inside
// the free window is carried out without a question, and the wait ends
// at the cancellation message.
func (c *changer) confirmLateCancel(ctx context.Context, s Scenario, rng *rand.Rand) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(lateCancelWait)
	for {
		for _, m := range c.e.twilio.Messages() {
			if !strings.HasSuffix(m.To, s.Customer) {
				continue
			}
			switch {
			case strings.Contains(m.Body, keptQuestion):
				c.d.whatsapp(ctx, s, "Ja", rng)
				return
			case strings.Contains(m.Body, cancelledWord):
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return // what happened is judged from the rows (changecheck.go)
		case <-tick.C:
		}
	}
}
