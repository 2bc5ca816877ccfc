package drill

import (
	"context"
	"html"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/bookonce/bookonce/agent"
	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/reference"
	"github.com/bookonce/bookonce/twilio"
)

// A customer who cancelled books the same slot again; one who moved asks
// for the old slot. Either is a new wish (the cancelled booking is over,
// the moved one covers its new slot): it must end in a new booking, and no
// answer may say "already booked" or "in Bearbeitung" about a booking that
// no longer holds the slot. The drill sends the wish once the first change
// has its message at the customer, on the scenario's own channel (WhatsApp,
// a call, or the agent tools), and the checks judge it from the rows.

// rebookAttempt is what the drill sent and heard for a rebook's wish.
type rebookAttempt struct {
	// sentAt is when the wish went out (zero: it did not, see skipped).
	sentAt  time.Time
	channel string
	skipped string
	// answer is what the customer heard first: "confirmed", "false: …"
	// (an answer that calls the slot booked or in progress), or "none".
	answer string
	// agentWorkflow is the booking an agent's answer named.
	agentWorkflow string
}

// falseWords are the answers (German, the drill tenant's language) that
// call a slot already booked or in progress: false after a cancel, or
// about the old slot after a move.
var falseWords = []string{"bereits in Bearbeitung", "bereits einen Termin", "bereits ein Termin für Sie in Bearbeitung", "Sie haben diesen Termin bereits"}

// confirmedWords start a booking's confirmation (templates confirmation
// and voice_confirmed).
const confirmedWords = "Ihr Termin ist bestätigt"

// bookAgain sends a rebook's second wish once the first change is told,
// and waits for the first answer.
func (c *changer) bookAgain(ctx context.Context, a *appliedChange) {
	first := cancelledWord
	if a.change.Kind == MoveBack {
		first = movedText
	}
	var at rebookAttempt
	if w, _ := c.await(ctx, a.scenario.Customer, a.sentAt, 0, first); w == "" {
		at.skipped = "the first change was never told"
		c.setAgain(a, at)
		return
	}
	s := a.scenario
	s.Redeliveries, s.Concurrent = 0, false
	w := a.wish // the slot booked first: the cancelled one, or the one moved away from
	rng := rand.New(rand.NewPCG(c.seed, uint64(s.ID)+3<<32))
	at.sentAt = time.Now()
	var heard string
	switch {
	case s.Kind == Agent:
		at.channel = "agent"
		heard, at.agentWorkflow = c.agentAgain(ctx, s, w, rng)
	case s.Kind == Voice || s.Kind == CrossChannel && s.Phrasing%2 == 0:
		at.channel = "voice"
		heard = c.d.speak(ctx, s, pick(spokenTexts, s.Phrasing+1, w), rng)
	default:
		at.channel = "whatsapp"
		c.d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing+1, w), rng)
	}
	if strings.HasPrefix(judgeAnswer(heard), "other") || heard == "" {
		// Still under way (the call ends "the confirmation follows by
		// SMS"): the customer reads the next message.
		words := append([]string{confirmedWords}, falseWords...)
		heard, _ = c.await(ctx, s.Customer, at.sentAt, 0, words...)
	}
	at.answer = judgeAnswer(heard)
	c.setAgain(a, at)
}

// judgeAnswer names what a customer heard.
func judgeAnswer(heard string) string {
	switch {
	case heard == "":
		return "none"
	case strings.Contains(heard, confirmedWords) || heard == string(agent.StatusConfirmed) || heard == string(agent.StatusPending):
		return "confirmed"
	}
	for _, w := range falseWords {
		if strings.Contains(heard, w) {
			return "false: " + w
		}
	}
	if heard == string(agent.StatusAlreadyBooked) {
		return "false: " + heard
	}
	return "other: " + heard
}

func (c *changer) setAgain(a *appliedChange, at rebookAttempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.again = at
	c.answers["again "+at.answer+at.skipped]++
}

// agentAgain books the slot again through the agent tools, as the tool
// description says to after a cancel: a new call under a new key, then
// get_booking while pending. It returns the last status and workflow.
func (c *changer) agentAgain(ctx context.Context, s Scenario, w Wish, rng *rand.Rand) (string, string) {
	ag := c.d.agent
	in := agent.BookInput{Customer: s.Customer, Service: w.Service, Start: slotText(w.Start, s.Phrasing%2 == 0, s.Phrasing)}
	last := ag.follow(ctx, ag.call(ctx, newCallID(rng), in), rng)
	if last.Status == agent.StatusNeedsConfirmation {
		// Within the dedup window a moved booking nearby makes this a
		// possible second appointment: the customer, who asked for this
		// slot, says yes.
		in.ConfirmSecond = true
		last = ag.follow(ctx, ag.call(ctx, newCallID(rng), in), rng)
	}
	if last.Status == agent.StatusCancelled {
		// The wish met the first booking while its cancel was still under
		// way ("being cancelled", then cancelled): the agent asks again,
		// as the answer tells it to.
		last = ag.follow(ctx, ag.call(ctx, newCallID(rng), in), rng)
	}
	return string(last.Status), last.WorkflowID
}

// speak is a call whose one spoken wish is text; it returns what the
// gateway finally said (TwiML), following its redirects as Twilio does
// while the booking is under way, or "" when the call was never answered.
func (d *driver) speak(ctx context.Context, s Scenario, text string, rng *rand.Rand) string {
	sid := twilio.NewSID("CA")
	d.event(ctx, s, rng, channels.RouteVoice, url.Values{"CallSid": {sid}, "AccountSid": {"ACsimulated"}, "From": {s.Customer}, "To": {"+4930123456"}})
	route, form := channels.RouteVoiceGather+"?step=1", twilio.Speech(sid, s.Customer, text)
	for range maxRedirects {
		body, _ := d.answer(ctx, route, form) // unanswered: "" ends the call
		m := redirectTo.FindStringSubmatch(body)
		if m == nil {
			return body
		}
		route = html.UnescapeString(m[1])
		form = url.Values{"CallSid": {sid}, "AccountSid": {"ACsimulated"}, "From": {s.Customer}, "To": {"+4930123456"}, "CallStatus": {"in-progress"}}
	}
	return ""
}

// maxRedirects bounds the redirects one call follows (the gateway's wait
// loop redirects every few seconds while the booking is under way).
const maxRedirects = 40

// redirectTo finds a TwiML <Redirect>'s target.
var redirectTo = regexp.MustCompile(`<Redirect[^>]*>([^<]+)</Redirect>`)

// RebookChecks are what the rebooks left: every count but the tallies
// must be 0.
type RebookChecks struct {
	// Sent are second wishes sent; Skipped those never sent because the
	// first change was never told (a finding of the change checks).
	Sent    int `json:"sent"`
	Skipped int `json:"skipped"`
	// Rebooked are second wishes with a new booking confirmed at the slot
	// and its confirmation at the customer; InReview those a person owns.
	Rebooked int `json:"rebooked"`
	InReview int `json:"in_review"`
	// FalseAnswers are answers that called the slot booked or in
	// progress, or an agent's answer naming the old booking.
	FalseAnswers int `json:"false_answers"`
	// Lost are second wishes that ended in no new booking, no case.
	Lost     int      `json:"lost"`
	Examples []string `json:"examples,omitempty"`
}

// checkRebook judges one rebook's second wish from the rows.
// owned says whether an open review case holds the old booking or the
// customer's conversation.
func (c *ChangeChecks) checkRebook(a *appliedChange, rows changeRows, owned bool) {
	r := &c.Rebooks
	at := a.again
	if at.sentAt.IsZero() {
		r.Skipped++
		return
	}
	r.Sent++
	old := reference.SagaOf(a.workflowID)
	if strings.HasPrefix(at.answer, "false") || at.agentWorkflow != "" && at.agentWorkflow == old {
		r.FalseAnswers++
		c.example("rebook of %s by %s: %s (workflow %s)", old, at.channel, at.answer, at.agentWorkflow)
	}
	key := wishKey(a.scenario.Customer, a.wish.Service, a.wish.Start)
	for _, fam := range rows.confirmedAt[key] {
		if fam != old && rows.atTwilio[fam+"|confirmation"] > 0 {
			r.Rebooked++
			return
		}
	}
	if owned {
		r.InReview++
		return
	}
	r.Lost++
	c.example("rebook of %s by %s: no new booking (answer %q)", old, at.channel, at.answer)
}

// rebookRefs are the workflow IDs of the rebooks' new bookings: the newest
// intent of the wish, when it is not the first booking's.
func (e *env) rebookRefs(ctx context.Context) ([]string, error) {
	out := []string{}
	var intents map[string][]string
	for _, a := range e.changes.list() {
		if a.again.sentAt.IsZero() {
			continue
		}
		if intents == nil {
			var err error
			if intents, err = e.bookingIntents(ctx); err != nil {
				return nil, err
			}
		}
		for _, wf := range intents[wishKey(a.scenario.Customer, a.wish.Service, a.wish.Start)] {
			if wf != a.workflowID {
				out = append(out, wf)
			}
		}
	}
	return out, nil
}
