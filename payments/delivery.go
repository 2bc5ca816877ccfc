package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Delivery defaults.
const (
	DefaultDeliveryTimeout = 10 * time.Second
	DefaultMinBackoff      = 5 * time.Second
	DefaultMaxBackoff      = time.Hour
	// deliveryLease is how long a claimed attempt is hidden from other
	// deliverers; one that dies mid-request is retried after it.
	deliveryLease = time.Minute
)

// Deliverer sends recorded events to webhook endpoints, Stripe's way: a
// POST of the event JSON with a Stripe-Signature header, at least once,
// retried with capped exponential backoff until the endpoint answers 2xx.
// It drains webhook_deliveries (the outbox written with each event) and
// also expires open Checkout Sessions past their expires_at, so an
// abandoned link still reports checkout.session.expired. Any number of
// deliverers may share a database.
type Deliverer struct {
	Pool *pgxpool.Pool
	// Client sends the webhooks to the endpoints from configuration (an
	// operator's: the gateway, on any address); nil means one with
	// DefaultDeliveryTimeout.
	Client *http.Client
	// AllowPrivate lets tenants' endpoints (POST /v1/webhook_endpoints) be
	// private, loopback or link-local addresses: for development only
	// (make run, tests). Otherwise they reach public addresses alone,
	// without redirects (publicClient).
	AllowPrivate bool
	// Now is the clock; nil means time.Now. It also dates the signature,
	// which receivers check against their own clock (5 minutes' tolerance).
	Now func() time.Time
	// MinBackoff and MaxBackoff bound the wait before a retry: MinBackoff
	// doubled per failed attempt, at most MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
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
	public  *http.Client
}

// due is one claimed delivery.
type due struct {
	endpointID, eventID, url, secret string
	attempts                         int
}

// Run delivers every interval until ctx ends.
func (d *Deliverer) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			d.log().ErrorContext(ctx, "payments: webhook delivery pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass creates the configured endpoints (once), expires due sessions and
// makes one attempt at every due delivery; it returns how many attempts
// it made. Passes must not overlap within one Deliverer.
func (d *Deliverer) Pass(ctx context.Context) (int, error) {
	if err := d.ensureEndpoints(ctx); err != nil {
		return 0, err
	}
	if _, err := ExpireDue(ctx, d.Pool, d.now(), 100); err != nil {
		return 0, err
	}
	batch, err := d.claim(ctx, 100)
	if err != nil {
		return 0, err
	}
	for _, c := range batch {
		if err := d.attempt(ctx, c); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
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

// claim takes due deliveries and pushes them out by the lease, in one
// short transaction, so no transaction stays open across an HTTP call.
func (d *Deliverer) claim(ctx context.Context, limit int) ([]due, error) {
	var out []due
	now := d.now()
	err := pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT d.endpoint_id, d.event_id, e.url, e.secret, d.attempts
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.delivered_at IS NULL AND d.next_attempt_at <= $1
			ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE OF d SKIP LOCKED`, now, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
			var c due
			return c, r.Scan(&c.endpointID, &c.eventID, &c.url, &c.secret, &c.attempts)
		})
		if err != nil {
			return err
		}
		for i := range out {
			out[i].attempts++
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET attempts = $3, next_attempt_at = $4
				WHERE endpoint_id = $1 AND event_id = $2`, out[i].endpointID, out[i].eventID, out[i].attempts, now.Add(deliveryLease)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return out, nil
}

// attempt sends one delivery and records the answer: delivered on 2xx,
// otherwise due again after the backoff.
func (d *Deliverer) attempt(ctx context.Context, c due) error {
	var tenant string
	if err := d.Pool.QueryRow(ctx, `SELECT tenant_id FROM events WHERE id = $1`, c.eventID).Scan(&tenant); err != nil {
		return fmt.Errorf("read event %s: %w", c.eventID, err)
	}
	e, err := getEvent(ctx, d.Pool, tenant, c.eventID)
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
	ok := sendErr == nil && status >= 200 && status < 300
	if ok && d.Twice {
		// The duplicate's answer changes nothing: the first was a 2xx.
		if st, err := d.send(ctx, client, c.url, payload, header); err != nil || st >= 300 {
			d.log().WarnContext(ctx, "payments: deliberate duplicate webhook not accepted", "event", c.eventID, "status", st, "err", err)
		}
	}
	errText := ""
	if sendErr != nil {
		errText = sendErr.Error()
	}
	// delivered_at on success; otherwise the next attempt after the backoff.
	sql := `UPDATE webhook_deliveries SET delivered_at = $3, last_status = nullif($4, 0), last_error = nullif($5, '')
		WHERE endpoint_id = $1 AND event_id = $2`
	args := []any{c.endpointID, c.eventID, now, status, errText}
	if !ok {
		sql = `UPDATE webhook_deliveries SET next_attempt_at = $3, last_status = nullif($4, 0), last_error = nullif($5, '')
			WHERE endpoint_id = $1 AND event_id = $2`
		args[2] = now.Add(d.backoff(c.attempts))
		d.log().WarnContext(ctx, "payments: webhook not delivered", "event", c.eventID, "type", e.Type,
			"endpoint", c.endpointID, "attempt", c.attempts, "status", status, "err", sendErr)
	}
	if _, err := d.Pool.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("record delivery of %s: %w", c.eventID, err)
	}
	return nil
}

// clientFor is the client of an endpoint: the operator's configured ones
// go anywhere, a tenant's only to public addresses (unless AllowPrivate).
func (d *Deliverer) clientFor(endpointID string) *http.Client {
	if strings.HasPrefix(endpointID, configEndpointPrefix) || d.AllowPrivate {
		if d.Client != nil {
			return d.Client
		}
		return defaultClient
	}
	if d.public == nil {
		d.public = publicClient(DefaultDeliveryTimeout)
	}
	return d.public
}

// defaultClient sends to the configured endpoints.
var defaultClient = &http.Client{Timeout: DefaultDeliveryTimeout}

// send posts one webhook and returns the HTTP status.
func (d *Deliverer) send(ctx context.Context, client *http.Client, url string, payload []byte, signature string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set(SignatureHeader, signature)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
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
