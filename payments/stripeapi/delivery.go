package stripeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"
)

// Delivery defaults.
const (
	DefaultDeliveryTimeout = 10 * time.Second
	DefaultMinBackoff      = 5 * time.Second
	DefaultMaxBackoff      = time.Hour
	// deliveryLease is how long a claimed attempt is hidden from other
	// deliverers; one that dies mid-request is retried after it. It is at
	// least three timeouts (two requests with Twice, and the records).
	deliveryLease = time.Minute
	// expireBatch is how many sessions one expiry transaction takes.
	expireBatch = 100
)

// Deliverer sends recorded events to webhook endpoints, Stripe's way: a
// POST of the event JSON with a Stripe-Signature header, at least once,
// retried with capped exponential backoff until the endpoint answers 2xx.
// It drains webhook_deliveries (the outbox written with each event),
// several deliveries at once with a fair share per tenant (shares.go),
// disables a tenant's endpoint that keeps failing (disable.go), and in a
// loop of its own expires open Checkout Sessions past their expires_at,
// so an abandoned link still reports checkout.session.expired however
// slow the endpoints are. Any number of deliverers may share a database.
type Deliverer struct {
	Pool *pgxpool.Pool
	// Client sends the webhooks to the endpoints from configuration (an
	// operator's: the gateway, on any address); nil means a default one.
	Client *http.Client
	// Timeout bounds each request of a delivery, with every client (the
	// configured one included); zero means DefaultDeliveryTimeout.
	Timeout time.Duration
	// AllowLoopback lets tenants' endpoints (POST /v1/webhook_endpoints)
	// be on this machine's loopback too: for development only (make run,
	// tests). Never link-local (cloud metadata), private or any other
	// address that is not public: those are refused either way, without
	// redirects (publicClient).
	AllowLoopback bool
	// Now is the clock; nil means time.Now. It also dates the signature,
	// which receivers check against their own clock (5 minutes' tolerance).
	Now func() time.Time
	// MinBackoff and MaxBackoff bound the wait before a retry: MinBackoff
	// doubled per failed attempt, at most MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// MaxInFlight and PerTenant bound the deliveries in flight: in all,
	// and per share (a tenant's endpoints; the operator's endpoint for
	// the tenant); zero means DefaultMaxInFlight and DefaultPerTenant.
	MaxInFlight, PerTenant int
	// DisableAfterFailures and DisableAfter: a tenant's endpoint whose
	// last DisableAfterFailures attempts or more all failed, the first of
	// them DisableAfter ago or more, is disabled; zero means
	// DefaultDisableAfterFailures and DefaultDisableAfter.
	DisableAfterFailures int
	DisableAfter         time.Duration
	// Endpoints from configuration are created or updated before the first
	// delivery; EndpointsOf adds those of tenants applied while the API
	// runs (each one created at the first pass that lists it).
	Endpoints   []ConfigEndpoint
	EndpointsOf func() []ConfigEndpoint
	// Twice sends every successful delivery a second time at once, byte
	// for byte: the drill's proof that receivers deduplicate by event ID.
	Twice  bool
	Logger *slog.Logger

	ensured map[string]bool // IDs of the configured endpoints that exist
	setup   sync.Once
	// public reaches public addresses only; loopback those and this
	// machine (AllowLoopback).
	public, loopback *http.Client
	shares           *shares
}

// due is one claimed delivery.
type due struct {
	endpointID, eventID, tenant, url, secret string
	share                                    string
	attempts                                 int
}

// Run delivers and expires until ctx ends, in two loops: a delivery that
// waits for its timeout never delays an expiry. Each loop runs every
// interval; the delivery loop also claims more as soon as a delivery
// ends, so a backlog drains at the pace of its share. Run returns when
// the deliveries in flight have ended.
func (d *Deliverer) Run(ctx context.Context, every time.Duration) {
	d.init()
	var wg sync.WaitGroup
	wg.Go(func() { d.runExpiry(ctx, every) })
	d.runDelivery(ctx, every)
	wg.Wait()
}

func (d *Deliverer) runExpiry(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := d.Expire(ctx); err != nil && ctx.Err() == nil {
			d.log().ErrorContext(ctx, "payments: checkout session expiry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d *Deliverer) runDelivery(ctx context.Context, every time.Duration) {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		batch, err := d.claimDue(ctx)
		if err != nil && ctx.Err() == nil {
			d.log().ErrorContext(ctx, "payments: webhook delivery claim", "err", err)
		}
		for _, c := range batch {
			inFlight.Go(func() {
				defer d.shares.release(c.share)
				if err := d.attempt(ctx, c); err != nil && ctx.Err() == nil {
					d.log().ErrorContext(ctx, "payments: webhook delivery", "event", c.eventID, "endpoint", c.endpointID, "err", err)
				}
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.shares.freed:
		}
	}
}

// Pass runs both loops once and waits, for tests and tools: it expires
// due sessions, creates the configured endpoints (once) and makes one
// attempt at every due delivery that the bounds in flight admit, all at
// once; it returns how many attempts it made. It must not run alongside
// Run or another Pass of the same Deliverer.
func (d *Deliverer) Pass(ctx context.Context) (int, error) {
	d.init()
	if _, err := d.Expire(ctx); err != nil {
		return 0, err
	}
	batch, err := d.claimDue(ctx)
	if err != nil {
		return 0, err
	}
	var g errgroup.Group
	for _, c := range batch {
		g.Go(func() error {
			defer d.shares.release(c.share)
			return d.attempt(ctx, c)
		})
	}
	return len(batch), g.Wait()
}

// Expire expires every open session past its expires_at, a batch per
// transaction, and returns how many.
func (d *Deliverer) Expire(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := ExpireDue(ctx, d.Pool, d.now(), expireBatch)
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

func (d *Deliverer) init() {
	d.setup.Do(func() {
		d.public = publicClient(d.timeout(), false)
		d.loopback = publicClient(d.timeout(), true)
		d.shares = newShares()
	})
}

// claimDue creates the configured endpoints not created yet and claims
// the due deliveries the free slots admit.
func (d *Deliverer) claimDue(ctx context.Context) ([]due, error) {
	if err := d.ensureEndpoints(ctx); err != nil {
		return nil, err
	}
	return d.claim(ctx)
}

// ensureEndpoints creates the configured endpoints not created yet.
func (d *Deliverer) ensureEndpoints(ctx context.Context) error {
	all := d.Endpoints
	if d.EndpointsOf != nil {
		all = append(append([]ConfigEndpoint(nil), all...), d.EndpointsOf()...)
	}
	if d.ensured == nil {
		d.ensured = map[string]bool{}
	}
	for _, c := range all {
		if d.ensured[c.id()] {
			continue
		}
		if err := ensureEndpoint(ctx, d.Pool, c, d.now()); err != nil {
			return err
		}
		d.ensured[c.id()] = true
	}
	return nil
}

// attempt sends one delivery and records the answer: delivered on 2xx,
// otherwise due again after the backoff.
func (d *Deliverer) attempt(ctx context.Context, c due) error {
	e, err := getEvent(ctx, d.Pool, c.tenant, c.eventID)
	if err != nil {
		return fmt.Errorf("read event %s: %w", c.eventID, err)
	}
	payload, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", c.eventID, err)
	}
	now := d.now()
	header := sign(payload, c.secret, now)
	client := d.clientFor(c.endpointID)
	status, sendErr := d.send(ctx, client, c.url, payload, header)
	o := answer{at: now, status: status, err: sendErr, ok: sendErr == nil && status >= 200 && status < 300}
	if o.ok && d.Twice {
		// The duplicate's answer changes nothing: the first was a 2xx.
		if st, err := d.send(ctx, client, c.url, payload, header); err != nil || st >= 300 {
			d.log().WarnContext(ctx, "payments: deliberate duplicate webhook not accepted", "event", c.eventID, "status", st, "err", err)
		}
	}
	if !o.ok {
		d.log().WarnContext(ctx, "payments: webhook not delivered", "event", c.eventID, "type", e.Type,
			"endpoint", c.endpointID, "attempt", c.attempts, "status", status, "err", sendErr)
	}
	return d.record(ctx, c, o)
}

// clientFor is the client of an endpoint: the operator's configured ones
// go anywhere, a tenant's only to public addresses (and loopback with
// AllowLoopback).
func (d *Deliverer) clientFor(endpointID string) *http.Client {
	switch {
	case strings.HasPrefix(endpointID, configEndpointPrefix):
		if d.Client != nil {
			return d.Client
		}
		return defaultClient
	case d.AllowLoopback:
		return d.loopback
	}
	return d.public
}

// defaultClient sends to the configured endpoints; each request's
// context carries the delivery timeout.
var defaultClient = &http.Client{}

// send posts one webhook within the delivery timeout and returns the HTTP
// status.
func (d *Deliverer) send(ctx context.Context, client *http.Client, url string, payload []byte, signature string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, errors.New("the endpoint's URL does not parse as an HTTP request URL") // never echo it: it may hold a token
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set(SignatureHeader, signature)
	res, err := client.Do(req)
	if err != nil {
		return 0, redactURLError(err) // logged and stored as last_error
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // reuse the connection; the body decides nothing
	return res.StatusCode, nil
}

// backoff is the wait after the given number of failed attempts.
func (d *Deliverer) backoff(attempts int) time.Duration {
	lo, hi := d.MinBackoff, d.MaxBackoff
	if lo <= 0 {
		lo = DefaultMinBackoff
	}
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	b := lo
	for i := 1; i < attempts && b < hi; i++ {
		b *= 2
	}
	return min(b, hi)
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Deliverer) log() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}
