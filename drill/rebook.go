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
// Every other rebook whose cancel refunds is impatient: the wish goes out
// as soon as the gateway took the cancel, while it is under way; told that
// the booking is being cancelled, the customer writes again once the
// cancellation message arrived.

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
	// whileCancelling: sent before the cancel was told; toldEnding: the
	// answer said the booking is being cancelled, and the wish went out
	// again once the cancel was told.
	whileCancelling, toldEnding bool
	// heard are the messages the customer got when none counted as an
	// answer, for the report.
	heard []string
}

// falseWords are the answers (German, the drill tenant's language) that
// call a slot already booked or in progress: false after a cancel, or
// about the old slot after a move.
var falseWords = []string{"bereits in Bearbeitung", "bereits einen Termin", "bereits ein Termin für Sie in Bearbeitung", "Sie haben diesen Termin bereits"}

// confirmedWords start a booking's confirmation (templates confirmation
// and voice_confirmed); endingWords tell that the booking a wish met is
// still being cancelled (template being_cancelled).
const (
	confirmedWords = "Ihr Termin ist bestätigt"
	endingWords    = "wird gerade storniert"
	// answerEnding is judgeAnswer's name for endingWords.
	answerEnding = "being cancelled"
	// endingWait bounds the wait of a customer told that the booking is
	// being cancelled for its cancellation message: longer than the
	// drill's outages together.
	endingWait = 3 * lateCancelWait
)

// bookAgain sends a rebook's second wish once the first change is told
// (or, whileCancelling, at once) and waits for the first answer. A wish
// told that its booking is still being cancelled is sent again once the
// cancellation message arrived, as that answer asks.
func (c *changer) bookAgain(ctx context.Context, a *appliedChange, whileCancelling bool) {
	first := cancelledWord
	if a.change.Kind == MoveBack {
		first = movedText
	}
	var at rebookAttempt
	if !whileCancelling {
		if w, _ := c.await(ctx, a.scenario.Customer, a.sentAt, 0, first); w == "" {
			at.skipped = "the first change was never told"
			c.setAgain(a, at)
			return
		}
	}
	at.whileCancelling = whileCancelling
	rng := rand.New(rand.NewPCG(c.seed, uint64(a.scenario.ID)+3<<32))
	heard := c.wishAgain(ctx, a, &at, rng)
	if judgeAnswer(heard) == answerEnding {
		// Told the truth; the customer writes again once the cancel is
		// told, which the drill's outages may delay by minutes (a refund
		// retried through the payment API's). A cancel never told is the
		// cancel checks' finding, not this wish's.
		at.toldEnding = true
		if w, _ := c.awaitFor(ctx, endingWait, a.scenario.Customer, at.sentAt, 0, cancelledWord); w == "" {
			at.skipped = "told the booking is being cancelled; the cancellation was not told within " + endingWait.String()
			c.setAgain(a, at)
			return
		}
		heard = c.wishAgain(ctx, a, &at, rng)
	}
	at.answer = judgeAnswer(heard)
	c.setAgain(a, at)
}

// wishAgain sends the first booking's wish again on the scenario's own
// channel and returns what the customer heard first.
func (c *changer) wishAgain(ctx context.Context, a *appliedChange, at *rebookAttempt, rng *rand.Rand) string {
	s := a.scenario
	s.Redeliveries, s.Concurrent = 0, false
	w := a.wish // the slot booked first: the cancelled one, or the one moved away from
	at.sentAt = time.Now()
	var heard string
	switch {
	case s.Kind == Agent:
		at.channel = "agent"
		heard, at.agentWorkflow = c.agentAgain(ctx, s, w, rng)
	case wishByCall(s):
		at.channel = "voice"
		heard = c.d.speak(ctx, s, pick(spokenTexts, s.Phrasing+1, w), rng)
	default:
		at.channel = "whatsapp"
		c.d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing+1, w), rng)
	}
	if strings.HasPrefix(judgeAnswer(heard), "other") || heard == "" {
		// Still under way (the call ends "the confirmation follows by
		// SMS"): the customer reads the next message.
		words := append([]string{confirmedWords, endingWords}, falseWords...)
		heard, _ = c.await(ctx, s.Customer, at.sentAt, 0, words...)
	}
	if heard == "" {
		at.heard = c.heardSince(s.Customer, at.sentAt)
	}
	return heard
}

// rebookWhileCancelling sends the cancel and, as soon as the gateway has
// taken it and before the customer hears back, the same wish again: the
// wish meets the booking while its cancel is under way, and must be told
// so (or booked anew), never "in Bearbeitung".
func (c *changer) rebookWhileCancelling(ctx context.Context, a *appliedChange) {
	posted := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.deliver(ctx, a, func() { close(posted) })
	}()
	select {
	case <-posted:
		c.bookAgain(ctx, a, true)
	case <-ctx.Done():
	}
	<-done
}

// whileCancelling reports whether a's rebook is sent while its cancel is
// under way: every other rebook whose cancel went by one message or one
// call on the channel the wish takes (the conversation takes one
// channel's messages in order; across channels, a call's words can reach
// it after a WhatsApp sent later, a race recorded on issue #48), and whose
// cancel refunds the deposit (one that keeps it asks the customer first,
// and a wish before the "Ja" meets a booking that is rightly still
// booked).
func whileCancelling(a *appliedChange, now time.Time) bool {
	s, c := a.scenario, a.change
	return c.Kind == Rebook && s.Kind != Agent && c.Phrasing>>3%2 == 0 &&
		c.Dup != AcrossChannels && changeByCall(c) == wishByCall(s) &&
		a.wish.Start.Sub(now) > drillCancellationWindow+time.Hour
}

// wishByCall reports whether s's customer asks again by phone.
func wishByCall(s Scenario) bool {
	return s.Kind == Voice || s.Kind == CrossChannel && s.Phrasing%2 == 0
}

// changeByCall reports whether a change sent once by chat goes by phone.
func changeByCall(c Change) bool { return c.Dup == Once && c.Phrasing%2 == 0 }

// judgeAnswer names what a customer heard.
func judgeAnswer(heard string) string {
	switch {
	case heard == "":
		return "none"
	case strings.Contains(heard, confirmedWords) || heard == string(agent.StatusConfirmed) || heard == string(agent.StatusPending):
		return "confirmed"
	case strings.Contains(heard, endingWords):
		return answerEnding
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
	last := ag.follow(ctx, ag.call(ctx, newCallID(rng), in), ag.getBooking(rng))
	if last.Status == agent.StatusNeedsConfirmation {
		// Within the dedup window a moved booking nearby makes this a
		// possible second appointment: the customer, who asked for this
		// slot, says yes.
		in.ConfirmSecond = true
		last = ag.follow(ctx, ag.call(ctx, newCallID(rng), in), ag.getBooking(rng))
	}
	if last.Status == agent.StatusCancelled {
		// The wish met the first booking while its cancel was still under
		// way ("being cancelled", then cancelled): the agent asks again,
		// as the answer tells it to.
		last = ag.follow(ctx, ag.call(ctx, newCallID(rng), in), ag.getBooking(rng))
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
	// first change was never told, or (told the booking is being
	// cancelled) never sent again because the cancellation was not told
	// within endingWait: findings of the change checks, not of the wish.
	Sent    int `json:"sent"`
	Skipped int `json:"skipped"`
	// WhileCancelling are second wishes sent while the cancel was under
	// way; ToldEnding those answered that the booking is being cancelled
	// (and sent again once it was).
	WhileCancelling int `json:"while_cancelling"`
	ToldEnding      int `json:"told_being_cancelled"`
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
	if at.whileCancelling {
		r.WhileCancelling++
	}
	if at.toldEnding {
		r.ToldEnding++
	}
	if at.sentAt.IsZero() || at.skipped != "" {
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
	c.example("rebook of %s by %s (while cancelling: %t): no new booking (answer %q; heard %q)", old, at.channel, at.whileCancelling, at.answer, at.heard)
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
