package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/twilio"
)

// RelayTraffic counts the drill's calls on Twilio ConversationRelay: the
// caller speaks over a WebSocket instead of <Gather>, as a shop that
// bought Twilio's voice agent has it.
type RelayTraffic struct {
	// Calls are calls connected to ConversationRelay; Reconnects the
	// sockets opened again after a drop (the drill's, or a gateway
	// killed under the call), each replaying the sentence not answered
	// yet; Interrupts the callers who talked over "one moment" and hung
	// up (their outcome comes in writing).
	Calls      int `json:"calls"`
	Reconnects int `json:"reconnects"`
	Interrupts int `json:"interrupts"`
	// Heard counts the calls by the last thing the caller heard: the
	// outcome, only the wait line, nothing.
	Heard map[string]int `json:"heard"`
	// Unanswered are calls whose sentence got no answer at all (fails
	// the drill).
	Unanswered int      `json:"unanswered"`
	Errors     []string `json:"errors,omitempty"`
}

func (r RelayTraffic) String() string {
	return fmt.Sprintf("%d calls, %d reconnects, %d interrupted; heard %s", r.Calls, r.Reconnects, r.Interrupts, intLine(r.Heard))
}

// failures: a caller who said their wish and heard nothing back.
func (r RelayTraffic) failures() []string {
	if r.Unanswered == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d ConversationRelay calls never answered: %v", r.Unanswered, r.Errors)}
}

// relayCallers plays the callers on ConversationRelay.
type relayCallers struct {
	mu sync.Mutex
	t  RelayTraffic
}

func (r *relayCallers) count(f func(*RelayTraffic)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t.Heard == nil {
		r.t.Heard = map[string]int{}
	}
	f(&r.t)
}

func (r *relayCallers) snapshot() RelayTraffic {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	t.Heard, t.Errors = copyCounts(t.Heard), append([]string(nil), t.Errors...)
	return t
}

// viaRelay: a third of the calls go to ConversationRelay, drawn from bits
// of the scenario's phrasing that the texts and the agents do not read.
func viaRelay(s Scenario) bool { return (s.Phrasing/256)%3 == 0 }

// relayWait is the line the gateway says while the booking is under way.
const relayWait = "Einen Moment"

// relayCall is one call on ConversationRelay: the call answered with the
// <Connect><ConversationRelay> TwiML, the socket opened as Twilio does,
// the wish said once; the socket dropped s.Redeliveries times before the
// answer (each reconnect replays the sentence); then the caller listens
// until the outcome, reconnecting when a killed gateway drops the socket,
// or, for some, talks over "one moment" and hangs up.
func (d *driver) relayCall(ctx context.Context, s Scenario, text string, rng *rand.Rand) {
	atomic.AddInt64(&d.traffic.Events, 1)
	form := url.Values{"CallSid": {twilio.NewSID("CA")}, "AccountSid": {"ACsimulated"}, "From": {s.Customer}, "To": {s.shop()}}
	twiml, ok := d.answer(ctx, channels.RouteVoiceRelay, form)
	if !ok {
		atomic.AddInt64(&d.traffic.Refused, 1)
		return
	}
	atomic.AddInt64(&d.traffic.Accepted, 1)
	d.relay.count(func(t *RelayTraffic) { t.Calls++ })
	a, err := twilio.ParseRelayAnswer(twiml)
	if err != nil {
		d.relay.unanswered(err)
		return
	}
	c, err := d.sim.Relay(a, s.Customer)
	if err != nil {
		d.relay.unanswered(err)
		return
	}
	c.CallSid, c.To = form.Get("CallSid"), s.shop()
	if err := d.relayConnect(ctx, c, false); err != nil {
		d.relay.unanswered(err)
		return
	}
	defer c.Hangup()
	if err := c.Say(ctx, text); err != nil && d.relayConnect(ctx, c, true) != nil { // a failed write is a drop: the reconnect replays it
		d.relay.unanswered(err)
		return
	}
	for range s.Redeliveries {
		pause(ctx, rng, 300*time.Millisecond)
		c.Drop()
		if err := d.relayConnect(ctx, c, true); err != nil {
			d.relay.unanswered(err)
			return
		}
	}
	d.relayListen(ctx, c, talksOver(s))
}

// relayListen reads what the caller hears until the outcome (or, with
// interrupt, until "one moment", which the caller then talks over and
// hangs up on); a dropped socket is opened again, replaying the sentence.
func (d *driver) relayListen(ctx context.Context, c *twilio.RelayCall, interrupt bool) {
	heard := ""
	ctx, cancel := context.WithTimeout(ctx, relayListenFor)
	defer cancel()
	for {
		said, err := c.Next(ctx)
		if err == nil && said != "" {
			heard = said
		}
		switch {
		case err == nil && interrupt && strings.Contains(said, relayWait):
			_ = c.Interrupt(ctx)
			d.relay.count(func(t *RelayTraffic) { t.Interrupts++; t.Heard["wait, then talked over it"]++ })
			return
		case err == nil && said != "" && !strings.Contains(said, relayWait):
			d.relay.count(func(t *RelayTraffic) { t.Heard["outcome"]++ })
			return
		case err == nil:
			continue
		case ctx.Err() == nil && d.relayConnect(ctx, c, true) == nil:
			continue
		case heard != "":
			d.relay.count(func(t *RelayTraffic) { t.Heard["wait only"]++ })
			return
		default:
			d.relay.unanswered(err)
			return
		}
	}
}

// relayListenFor bounds how long a caller listens: beyond the gateway's
// wait for the outcome (VOICE_CONFIRM_WAIT) and a database outage.
const relayListenFor = 90 * time.Second

// relayConnect opens the call's socket, retried with backoff as Twilio
// reconnects (the gateway may be down or the database away); again: the
// call had a socket before.
func (d *driver) relayConnect(ctx context.Context, c *twilio.RelayCall, again bool) error {
	backoff := 200 * time.Millisecond
	var err error
	for attempt := range deliveryAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		d.db.wait(ctx)
		if err = c.Connect(ctx); err == nil {
			if again {
				d.relay.count(func(t *RelayTraffic) { t.Reconnects++ })
			}
			return nil
		}
	}
	return err
}

// unanswered records a call whose caller heard nothing.
func (r *relayCallers) unanswered(err error) {
	r.count(func(t *RelayTraffic) {
		t.Unanswered++
		t.Heard["nothing"]++
		if len(t.Errors) < 10 {
			t.Errors = append(t.Errors, err.Error())
		}
	})
}

// talksOver: a quarter of the relay callers talk over "one moment" and
// hang up.
func talksOver(s Scenario) bool { return (s.Phrasing/1024)%4 == 0 }
