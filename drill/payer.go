package drill

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bookonce/bookonce/twilio"
)

// payLink finds a hosted payment page's URL in a message.
var payLink = regexp.MustCompile(`https?://[^\s]+/pay/cs_[A-Za-z0-9_]+`)

// Behaviours of a customer who received a payment link. The drill pays
// through the page's own form, the path a script takes without a browser.
const (
	payAtOnce         = "pays"
	payDoubleTap      = "double_tap"
	payAfterDecline   = "declined_then_pays"
	payAfterChallenge = "authenticates_then_pays"
)

// Payments is what the drill's customers did with their payment links.
type Payments struct {
	// Links is how many distinct payment links reached customers.
	Links int `json:"links"`
	// ByBehaviour counts the links per customer behaviour.
	ByBehaviour map[string]int `json:"by_behaviour"`
	// Paid is how many links ended paid (200, or 409 "already paid" after a
	// lost answer); Expired how many were refused as expired (410).
	Paid    int `json:"paid"`
	Expired int `json:"expired"`
	// Failed counts links the customer could not pay (unexpected answers
	// after every retry); each is listed in Errors.
	Failed int      `json:"failed"`
	Errors []string `json:"errors,omitempty"`
}

// payer plays the customers' part after a payment link: it watches the
// fake Twilio for links and pays each one once, in a seeded mix of
// behaviours (a double tap, a decline first, a 3-D Secure challenge).
type payer struct {
	twilio *twilio.FakeServer
	client *http.Client
	rng    *rand.Rand

	// customers, when set, is asked whether the customer a link went to
	// pays it, and told when they do (early cancels, earlycancel.go).
	customers payingCustomers

	mu     sync.Mutex
	seen   map[string]bool
	report Payments
	wg     sync.WaitGroup
}

// payingCustomers are the customers' intentions the payer asks about.
type payingCustomers interface {
	skipPay(to string) bool
	paying(ctx context.Context, to string)
}

func newPayer(tw *twilio.FakeServer, seed uint64) *payer {
	return &payer{twilio: tw, client: &http.Client{Timeout: 10 * time.Second}, rng: rand.New(rand.NewPCG(seed, 0x9a7)),
		seen: map[string]bool{}, report: Payments{ByBehaviour: map[string]int{}}}
}

// run scans the sent messages every interval until ctx ends, then waits
// for the payments under way.
func (p *payer) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	scanned := 0
	for {
		msgs := p.twilio.Messages()
		for _, m := range msgs[scanned:] {
			p.consider(ctx, m.To, m.Body)
		}
		scanned = len(msgs)
		select {
		case <-ctx.Done():
			p.wg.Wait()
			return
		case <-t.C:
		}
	}
}

func (p *payer) consider(ctx context.Context, to, body string) {
	link := payLink.FindString(body)
	if link == "" || p.customers != nil && p.customers.skipPay(to) {
		return
	}
	p.mu.Lock()
	if p.seen[link] {
		p.mu.Unlock()
		return
	}
	p.seen[link] = true
	behaviour := p.pick()
	p.report.Links++
	p.report.ByBehaviour[behaviour]++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if p.customers != nil {
			go p.customers.paying(ctx, to)
		}
		p.settle(p.pay(ctx, link, behaviour))
	}()
}

// pick draws a behaviour (under p.mu: the generator is not safe for
// concurrent use).
func (p *payer) pick() string {
	switch r := p.rng.Float64(); {
	case r < 0.10:
		return payDoubleTap
	case r < 0.15:
		return payAfterDecline
	case r < 0.20:
		return payAfterChallenge
	}
	return payAtOnce
}

func (p *payer) settle(status int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		p.report.Failed++
		p.report.Errors = append(p.report.Errors, err.Error())
	case status == http.StatusGone:
		p.report.Expired++
	default:
		p.report.Paid++
	}
}

// pay plays one behaviour and returns the page's final status: 200 (paid
// now), 409 (paid already: an earlier answer was lost) or 410 (expired).
func (p *payer) pay(ctx context.Context, link, behaviour string) (int, error) {
	switch behaviour {
	case payDoubleTap:
		var wg sync.WaitGroup
		statuses, errs := make([]int, 2), make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); statuses[i], errs[i] = p.post(ctx, link, "payment_method", "pm_card_visa") }()
		}
		wg.Wait()
		for i := range 2 {
			if errs[i] == nil && statuses[i] == http.StatusOK {
				return statuses[i], nil
			}
		}
		return statuses[0], errs[0]
	case payAfterDecline:
		if status, err := p.post(ctx, link, "payment_method", "pm_card_chargeDeclined"); err != nil || status != http.StatusPaymentRequired {
			return status, unexpected(link, "declined card", status, err)
		}
	case payAfterChallenge:
		status, err := p.post(ctx, link, "payment_method", "pm_card_authenticationRequired")
		if err != nil || status != http.StatusOK {
			return status, unexpected(link, "challenge", status, err)
		}
		return p.post(ctx, link, "authentication", "approve")
	}
	return p.post(ctx, link, "payment_method", "pm_card_visa")
}

// post submits the page's form, retrying what a customer would retry (no
// answer, a server error, an outage of the payment API) for up to five
// minutes; 200, 402, 409 and 410 are answers.
func (p *payer) post(ctx context.Context, link, field, value string) (int, error) {
	var last error
	for attempt := 0; attempt < 150; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
		status, err := p.postOnce(ctx, link, url.Values{field: {value}})
		switch {
		case err != nil:
			last = err
		case status == http.StatusOK, status == http.StatusPaymentRequired, status == http.StatusConflict, status == http.StatusGone:
			return status, nil
		default:
			last = fmt.Errorf("status %d", status)
		}
	}
	return 0, fmt.Errorf("pay %s: %w", link, last)
}

func (p *payer) postOnce(ctx context.Context, link string, form url.Values) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, link, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func unexpected(link, step string, status int, err error) error {
	if err != nil {
		return fmt.Errorf("pay %s (%s): %w", link, step, err)
	}
	return fmt.Errorf("pay %s (%s): unexpected status %d", link, step, status)
}

// snapshot copies the report.
func (p *payer) snapshot() Payments {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.report
	out.ByBehaviour = map[string]int{}
	for k, v := range p.report.ByBehaviour {
		out.ByBehaviour[k] = v
	}
	out.Errors = append([]string(nil), p.report.Errors...)
	return out
}
