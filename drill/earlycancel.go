package drill

import (
	"context"
	"strings"
	"time"

	"github.com/bookonce/bookonce/twilio"
)

// Some customers cancel before their booking is confirmed: while the slot
// is held, while their payment link waits, while they pay, while the
// saga confirms the reservation, captures the deposit or starts the
// lifecycle. The drill cannot stop the saga at a phase from outside;
// it watches the rows every earlyEvery and sends the cancel at the first
// sight of the phase aimed at (or later, when the saga went past it
// between two looks), and records the phase it saw. Customers who aim at
// the held slot or the waiting link do not pay their link, so the saga
// waits there until their cancel arrives; those who aim at the payment
// cancel at the moment they pay.

// SagaPhase is a phase of the booking saga, as the rows show it.
type SagaPhase string

// The phases an early cancel aims at, in the saga's order.
const (
	PhaseHolding       SagaPhase = "holding"
	PhaseWaitingLink   SagaPhase = "waiting_for_link"
	PhaseAuthorising   SagaPhase = "authorising"
	PhaseConfirming    SagaPhase = "confirming"
	PhaseCapturing     SagaPhase = "capturing"
	PhaseStartingCycle SagaPhase = "starting_lifecycle"
	// phaseEnded: the saga had ended (booked and confirmed, or
	// compensated) when the drill looked.
	phaseEnded SagaPhase = "ended"
)

// SagaPhases lists the phases an early cancel aims at, in order.
var SagaPhases = []SagaPhase{PhaseHolding, PhaseWaitingLink, PhaseAuthorising, PhaseConfirming, PhaseCapturing, PhaseStartingCycle}

// earlyEvery is how often the drill looks at the rows of the bookings
// whose customers will cancel early.
const earlyEvery = 100 * time.Millisecond

func (p SagaPhase) order() int {
	for i, q := range SagaPhases {
		if q == p {
			return i
		}
	}
	return len(SagaPhases)
}

// sagaRow is what the rows show of one booking saga.
type sagaRow struct {
	workflowID  string
	reservation string // the newest reservation's status, "" before the hold
	link        bool   // a payment link row exists
	intent      string // the newest payment intent's status, "" if none
	deposit     bool   // the service takes a deposit
}

// phase is the saga phase the rows show ("" before the hold).
func (r sagaRow) phase() SagaPhase {
	switch {
	case r.reservation == "":
		return ""
	case r.reservation == "held" && r.intent == "requires_capture":
		return PhaseConfirming
	case r.reservation == "held" && r.link:
		return PhaseWaitingLink
	case r.reservation == "held":
		return PhaseHolding
	case r.reservation == "confirmed" && r.intent == "requires_capture":
		return PhaseCapturing
	case r.reservation == "confirmed" && (r.intent == "succeeded" || !r.deposit):
		return PhaseStartingCycle
	}
	return phaseEnded
}

// sagaRowsSQL reads the saga rows of the customers in $1, by wish key.
const sagaRowsSQL = `SELECT b.customer || '|' || b.service || '|' || to_char(b.slot_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
	b.workflow_id,
	coalesce((SELECT r.status FROM calendar_reservations r WHERE r.reference = b.workflow_id ORDER BY r.created_at DESC LIMIT 1), ''),
	EXISTS (SELECT 1 FROM outbox_messages m WHERE m.reference = b.workflow_id AND m.kind = 'payment_link'),
	coalesce((SELECT p.status FROM payment_intents p WHERE p.booking_reference = b.workflow_id ORDER BY p.created_at DESC LIMIT 1), ''),
	EXISTS (SELECT 1 FROM calendar_services s WHERE s.id = b.service AND s.deposit_amount IS NOT NULL)
	FROM booking_intents b WHERE b.customer = ANY($1)`

// sagaRows reads the saga rows of customers, by wish key.
func (e *env) sagaRows(ctx context.Context, customers []string) (map[string]sagaRow, error) {
	rows, err := e.pool.Query(ctx, sagaRowsSQL, customers)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]sagaRow{}
	for rows.Next() {
		var key string
		var r sagaRow
		if err := rows.Scan(&key, &r.workflowID, &r.reservation, &r.link, &r.intent, &r.deposit); err != nil {
			return nil, err
		}
		out[key] = r
	}
	return out, rows.Err()
}

// watchEarly sends the early cancels as their sagas reach the phases
// aimed at, until ctx ends or every one is sent.
func (c *changer) watchEarly(ctx, sendCtx context.Context, all []Scenario) {
	waiting := map[string]Scenario{}
	for _, s := range all {
		if s.Change != nil && s.Change.Kind == CancelEarly {
			waiting[wishKey(s.Customer, s.Wishes[0].Service, s.Wishes[0].Start)] = s
		}
	}
	tick := time.NewTicker(earlyEvery)
	defer tick.Stop()
	for len(waiting) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		customers := make([]string, 0, len(waiting))
		for _, s := range waiting {
			customers = append(customers, s.Customer)
		}
		rows, err := c.e.sagaRows(ctx, customers)
		if err != nil {
			continue // PostgreSQL may be down: look again
		}
		for key, s := range waiting {
			r, ok := rows[key]
			if !ok {
				continue
			}
			seen := r.phase()
			aim := s.Change.Phase
			// The payment phase is hit by the payer (payHook); the rows
			// stand in only when the saga went past it unpaid by the drill.
			if seen == "" || seen.order() < aim.order() || aim == PhaseAuthorising && seen == PhaseWaitingLink {
				continue
			}
			delete(waiting, key)
			c.startEarly(sendCtx, s, r.workflowID, seen)
		}
	}
}

// startEarly sends one early cancel in the background, once per scenario.
func (c *changer) startEarly(ctx context.Context, s Scenario, workflowID string, seen SagaPhase) {
	a := &appliedChange{scenario: s, wish: s.Wishes[0], change: *s.Change, workflowID: workflowID, sentAt: time.Now(), phaseSeen: seen}
	c.mu.Lock()
	if c.done[s.ID] != nil {
		c.mu.Unlock()
		return
	}
	c.done[s.ID], c.sent[workflowID] = a, a
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.send(ctx, a)
	}()
}

// earlyOf returns the early cancel planned for the customer a message
// went to (its To carries the customer's number, maybe with a channel
// prefix), if any.
func (c *changer) earlyOf(to string) (Scenario, bool) {
	if c == nil {
		return Scenario{}, false
	}
	for _, s := range c.early {
		if strings.HasSuffix(to, s.Customer) {
			return s, true
		}
	}
	return Scenario{}, false
}

// skipPay reports whether the customer a payment link went to will not pay
// it: they cancel while the slot is held or the link waits.
func (c *changer) skipPay(to string) bool {
	s, ok := c.earlyOf(to)
	return ok && s.Change.Phase.order() < PhaseAuthorising.order()
}

// paying is told by the payer that the customer a link went to pays now:
// a customer who cancels while paying sends the cancel at this moment.
func (c *changer) paying(ctx context.Context, to string) {
	s, ok := c.earlyOf(to)
	if !ok || s.Change.Phase != PhaseAuthorising {
		return
	}
	rows, err := c.e.sagaRows(ctx, []string{s.Customer})
	if err != nil {
		return // the watcher sends it once the rows show the saga past the payment
	}
	w := s.Wishes[0]
	if r, ok := rows[wishKey(s.Customer, w.Service, w.Start)]; ok {
		c.startEarly(ctx, s, r.workflowID, PhaseAuthorising)
	}
}

// answeredCancel reports whether a message at Twilio to customer, sent
// after since, answers a cancel.
func answeredCancel(msgs []twilio.FakeMessage, customer string, since time.Time) bool {
	for _, m := range msgs {
		if !strings.HasSuffix(m.To, customer) || m.DateCreated.Before(since.Add(-time.Second)) {
			continue
		}
		if firstWord(m.Body, cancelAnswers) != "" {
			return true
		}
	}
	return false
}

// EarlyChecks are what the cancels sent during the saga left. Every
// count but the tallies must be 0.
type EarlyChecks struct {
	// Aimed counts the early cancels sent by the phase aimed at; Seen by
	// the phase the rows showed when each went out.
	Aimed map[SagaPhase]int `json:"aimed"`
	Seen  map[SagaPhase]int `json:"seen"`
	// InSaga are cancels the saga carried out (no reservation left, no
	// booking told); AfterConfirmation those that reached the booking's
	// lifecycle (judged as cancels, ChangeChecks); InReview those a person
	// owns.
	InSaga            int `json:"in_saga"`
	AfterConfirmation int `json:"after_confirmation"`
	InReview          int `json:"in_review"`
	// NotCarriedOut are cancels with a reservation still held or
	// confirmed, or a confirmation told and no cancellation after it.
	NotCarriedOut int `json:"not_carried_out"`
	// DepositsHeld are deposits of bookings cancelled in the saga that
	// stayed captured (unrefunded) or authorised.
	DepositsHeld int `json:"deposits_held"`
	// Unanswered are cancels without any answer at the customer by the
	// end of the drill (the drill's own wait may end before an answer
	// delayed by an outage).
	Unanswered int `json:"unanswered"`
}

// checkEarly judges one cancel sent during the saga; owned says whether
// an open case holds the booking or the conversation.
func (c *ChangeChecks) checkEarly(a *appliedChange, rows changeRows, pol changePolicy, cancelled map[string]time.Time, owned bool, msgs []twilio.FakeMessage) {
	e := &c.Early
	if e.Aimed == nil {
		e.Aimed, e.Seen = map[SagaPhase]int{}, map[SagaPhase]int{}
	}
	e.Aimed[a.change.Phase]++
	e.Seen[a.phaseSeen]++
	ref := a.workflowID
	if !answeredCancel(msgs, a.scenario.Customer, a.sentAt) {
		e.Unanswered++
		c.example("early cancel of %s (%s): no answer", ref, a.phaseSeen)
	}
	if _, ok := rows.byRef[ref+"|cancellation"]; ok {
		e.AfterConfirmation++
		if a.answer == answerOf[inFlightWords] {
			// Told "we cancel your unconfirmed booking": the lifecycle
			// that carried it out refunds in full, whatever the window.
			pol = changePolicy{reminders: pol.reminders}
		}
		c.checkCancel(a, rows, pol, cancelled)
		return
	}
	switch {
	case owned:
		e.InReview++
		return
	case rows.activeOf[ref] > 0 || rows.atTwilio[ref+"|confirmation"] > 0:
		e.NotCarriedOut++
		c.example("early cancel of %s (aimed %s, seen %s, answer %q): %d reservations active, %d confirmations told",
			ref, a.change.Phase, a.phaseSeen, a.answer, rows.activeOf[ref], rows.atTwilio[ref+"|confirmation"])
		return
	}
	e.InSaga++
	if rows.captured[ref] > 0 && rows.refunds[ref] == 0 || rows.authorised[ref] > 0 {
		e.DepositsHeld++
		c.example("early cancel of %s (seen %s): deposit still captured or authorised", ref, a.phaseSeen)
	}
}
