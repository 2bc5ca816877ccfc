package drill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bookonce/bookonce/channels"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/twilio"
)

// Traffic counts what the drill sent as Twilio.
type Traffic struct {
	// Events are distinct webhooks (distinct MessageSid / CallSid step).
	Events int64 `json:"events"`
	// Posts are all HTTP requests, redeliveries included.
	Posts int64 `json:"posts"`
	// Redeliveries are posts of an event the gateway had already answered
	// or that were sent concurrently with it.
	Redeliveries int64 `json:"redeliveries"`
	// Accepted are events the gateway answered 200 (at least once).
	Accepted int64 `json:"accepted"`
	// Refused are events never answered 200 after every retry: lost at
	// the edge (must be 0).
	Refused int64 `json:"refused"`
	// GatewayRetries are posts repeated because the gateway did not answer
	// 200, as Twilio retries.
	GatewayRetries int64 `json:"gateway_retries"`
	// HeldForOutage are posts (webhooks, agent and API calls) held back
	// while the drill kept PostgreSQL down (dbgate.go).
	HeldForOutage int64 `json:"held_for_outage"`
	// StaleWindows are customers whose WhatsApp window the drill closed
	// once their message was in: their booking's messages go as templates.
	StaleWindows int64 `json:"stale_windows"`
}

// driver plays Twilio and the customers.
type driver struct {
	db      *dbGate
	sim     twilio.Simulator
	traffic Traffic
	// closeWindow closes a StaleWindow customer's WhatsApp window once
	// their message is in (window.go).
	closeWindow func(ctx context.Context, s Scenario) error
	agent       *agentCustomer
	relay       *relayCallers
}

func newDriver(e *env, concurrency int) *driver {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency * 2
	token, _ := e.cfg.TokenFor(config.DefaultTenant) // the demo tenant's: its absence fails every agent call, visibly
	return &driver{db: &e.db, sim: twilio.Simulator{GatewayURL: e.gwURL, PublicBaseURL: e.gwURL, AuthToken: e.twilio.AuthToken,
		HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}, Twilio: e.twilio}, agent: newAgentCustomer(e.agentURL, token, e.platformKeys(), tr, &e.db),
		relay: &relayCallers{}}
}

// run plays every scenario, concurrency customers at a time.
func (d *driver) run(ctx context.Context, all []Scenario, concurrency int, seed uint64) {
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	rivals := map[int][]Scenario{}
	for _, s := range all {
		if s.Group != 0 {
			rivals[s.Group] = append(rivals[s.Group], s)
		}
	}
	for _, s := range all {
		group := rivals[s.Group]
		if s.Group != 0 && group[0].ID != s.ID {
			continue // played with the first rival
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if s.Group != 0 {
				d.rivals(ctx, group, seed)
				return
			}
			d.play(ctx, s, rand.New(rand.NewPCG(seed, uint64(s.ID))))
		}()
	}
	wg.Wait()
}

// rivals sends the messages of customers competing for one slot at the
// same moment, so their holds meet in the calendar.
func (d *driver) rivals(ctx context.Context, group []Scenario, seed uint64) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range group {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing, s.Wishes[0]), rand.New(rand.NewPCG(seed, uint64(s.ID))))
		}()
	}
	close(start)
	wg.Wait()
}

func (d *driver) play(ctx context.Context, s Scenario, rng *rand.Rand) {
	w := s.Wishes[0]
	switch s.Kind {
	case WhatsApp:
		d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing, w), rng)
		if s.StaleWindow && d.closeWindow != nil {
			if err := d.closeWindow(ctx, s); err == nil {
				atomic.AddInt64(&d.traffic.StaleWindows, 1)
			}
		}
		if s.Stop {
			d.whatsapp(ctx, s, stopWord, rng)
		}
	case Voice:
		d.call(ctx, s, pick(spokenTexts, s.Phrasing, w), rng)
	case CrossChannel:
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); d.call(ctx, s, pick(spokenTexts, s.Phrasing, w), rng) }()
		go func() {
			defer wg.Done()
			d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing, w), rand.New(rand.NewPCG(rng.Uint64(), 1)))
		}()
		wg.Wait()
	case Rephrase:
		first := pick(firstTexts, s.Phrasing, w)
		d.whatsapp(ctx, s, first, rng)
		pause(ctx, rng, 2*time.Second)
		again := pick(againTexts, s.Phrasing, w)
		if s.Phrasing%3 == 0 {
			again = first // a double tap: the same words, a new message
		}
		d.whatsapp(ctx, s, again, rng)
	case Agent:
		d.agent.book(ctx, s, rng)
	case Second, Ambiguous:
		d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing, w), rng)
		pause(ctx, rng, 3*time.Second)
		if s.Kind == Second && s.Phrasing%2 == 0 {
			d.call(ctx, s, pick(spokenTexts, s.Phrasing, s.Wishes[1]), rng)
		} else {
			d.whatsapp(ctx, s, pick(firstTexts, s.Phrasing+1, s.Wishes[1]), rng)
		}
	}
}

func pause(ctx context.Context, rng *rand.Rand, upTo time.Duration) {
	t := time.NewTimer(time.Duration(rng.Int64N(int64(upTo))))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (d *driver) whatsapp(ctx context.Context, s Scenario, text string, rng *rand.Rand) {
	form := twilio.WhatsApp(twilio.NewSID("SM"), s.Customer, text)
	form.Set("To", "whatsapp:"+s.shop())
	d.event(ctx, s, rng, channels.RouteWhatsApp, form)
}

// call is an incoming call (its start is redelivered too, sometimes) and
// the speech result of the first question; a third of the calls go to
// ConversationRelay instead (relaycaller.go).
func (d *driver) call(ctx context.Context, s Scenario, text string, rng *rand.Rand) {
	if viaRelay(s) {
		d.relayCall(ctx, s, text, rng)
		return
	}
	sid := twilio.NewSID("CA")
	d.event(ctx, s, rng, channels.RouteVoice, url.Values{"CallSid": {sid}, "AccountSid": {"ACsimulated"}, "From": {s.Customer}, "To": {s.shop()}})
	speech := twilio.Speech(sid, s.Customer, text)
	speech.Set("To", s.shop())
	d.event(ctx, s, rng, channels.RouteVoiceGather+"?step=1", speech)
}

// event delivers one webhook like Twilio: retried until answered 200, and
// redelivered s.Redeliveries times, concurrently or afterwards.
func (d *driver) event(ctx context.Context, s Scenario, rng *rand.Rand, route string, form url.Values) {
	atomic.AddInt64(&d.traffic.Events, 1)
	copies := 1 + s.Redeliveries
	atomic.AddInt64(&d.traffic.Redeliveries, int64(s.Redeliveries))
	accepted := make([]bool, copies)
	if s.Concurrent {
		var wg sync.WaitGroup
		for i := range copies {
			wg.Add(1)
			go func() { defer wg.Done(); accepted[i] = d.deliver(ctx, route, form) }()
		}
		wg.Wait()
	} else {
		for i := range copies {
			if i > 0 {
				pause(ctx, rng, 500*time.Millisecond)
			}
			accepted[i] = d.deliver(ctx, route, form)
		}
	}
	for _, ok := range accepted {
		if ok {
			atomic.AddInt64(&d.traffic.Accepted, 1)
			return
		}
	}
	atomic.AddInt64(&d.traffic.Refused, 1)
}

// deliveryAttempts bounds the posts of one event: with the backoff
// doubling from 200 ms they span about 25 s, longer than the drill's
// PostgreSQL restart takes even on a loaded two-core machine (measured up
// to 9 s), during which the gateway rightly answers 503 because it cannot
// record the event.
const deliveryAttempts = 8

// deliver posts until the gateway answers 200, at most deliveryAttempts
// times with backoff, as Twilio retries a webhook that failed.
func (d *driver) deliver(ctx context.Context, route string, form url.Values) bool {
	_, ok := d.answer(ctx, route, form)
	return ok
}

// answer is deliver that also returns the gateway's answer (TwiML for a
// call), for a caller who listens to it.
func (d *driver) answer(ctx context.Context, route string, form url.Values) (string, bool) {
	backoff := 200 * time.Millisecond
	for attempt := range deliveryAttempts {
		if attempt > 0 {
			atomic.AddInt64(&d.traffic.GatewayRetries, 1)
			select {
			case <-ctx.Done():
				return "", false
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		d.db.wait(ctx)
		atomic.AddInt64(&d.traffic.Posts, 1)
		status, body, err := d.sim.Post(ctx, route, form)
		if err == nil && status == http.StatusOK {
			return body, true
		}
	}
	return "", false
}

func (t *Traffic) snapshot() Traffic {
	return Traffic{Events: atomic.LoadInt64(&t.Events), Posts: atomic.LoadInt64(&t.Posts),
		Redeliveries: atomic.LoadInt64(&t.Redeliveries), Accepted: atomic.LoadInt64(&t.Accepted),
		Refused: atomic.LoadInt64(&t.Refused), GatewayRetries: atomic.LoadInt64(&t.GatewayRetries),
		StaleWindows: atomic.LoadInt64(&t.StaleWindows)}
}

func (t Traffic) String() string {
	return fmt.Sprintf("%d events, %d posts (%d redeliveries, %d held for the database outage), %d accepted, %d refused", t.Events, t.Posts, t.Redeliveries, t.HeldForOutage, t.Accepted, t.Refused)
}
