package stripeapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// When a tenant's endpoint is disabled for failing. Stripe disables an
// endpoint that has failed consistently for days (its retries of one event
// span three days); here it takes both: at least
// DefaultDisableAfterFailures attempts in a row without a 2xx, the first
// of them at least DefaultDisableAfter ago. The count keeps an endpoint
// that is tried rarely from being disabled on two failures days apart;
// the span keeps a burst of events to an endpoint that is down for a
// minute from disabling it. The operator's configured endpoints are
// never disabled: they are retried until their receiver is back.
const (
	DefaultDisableAfterFailures = 20
	DefaultDisableAfter         = 72 * time.Hour
)

// EventEndpointDisabled reports that the deliverer disabled a webhook
// endpoint that kept failing; data.object is the endpoint. Stripe emails
// the account instead, and has no such event; this API has no email, and
// the tenant's other endpoints and GET /v1/events are where it looks.
const EventEndpointDisabled = "webhook_endpoint.disabled"

// Why an endpoint is disabled (webhook_endpoints.disabled_reason).
const (
	disabledFailing = "failing"
	disabledByUser  = "user"
)

// answer is the outcome of one attempt.
type answer struct {
	at     time.Time
	status int
	err    error
	ok     bool
}

// disabled is what the log says about an endpoint just disabled.
type disabled struct {
	failures int
	since    time.Time
	held     int64
}

// record writes an attempt's outcome and the endpoint's run of failures
// in one transaction; a run long enough disables the endpoint.
func (d *Deliverer) record(ctx context.Context, c due, o answer) error {
	var off *disabled
	err := pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
		errText := ""
		if o.err != nil {
			errText = o.err.Error()
		}
		if o.ok {
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET delivered_at = $3, last_status = $4, last_error = NULL, held = NULL
				WHERE endpoint_id = $1 AND event_id = $2`, c.endpointID, c.eventID, o.at, o.status); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
				WHERE id = $1 AND consecutive_failures > 0`, c.endpointID)
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = $3, last_status = nullif($4, 0), last_error = nullif($5, '')
			WHERE endpoint_id = $1 AND event_id = $2`, c.endpointID, c.eventID, o.at.Add(d.backoff(c.attempts)), o.status, errText); err != nil {
			return err
		}
		if strings.HasPrefix(c.endpointID, configEndpointPrefix) {
			return nil
		}
		var err error
		off, err = d.countFailure(ctx, tx, c, o.at)
		return err
	})
	if err != nil {
		return fmt.Errorf("record delivery of %s: %w", c.eventID, err)
	}
	if off != nil {
		// No URL path or query (they may carry a token) and no secret.
		d.log().WarnContext(ctx, "payments: webhook endpoint disabled after repeated failures", "tenant", c.tenant,
			"endpoint", c.endpointID, "host", hostOf(c.url), "failures", off.failures, "failing_since", off.since,
			"held_events", off.held, "last_status", o.status)
	}
	return nil
}

// countFailure adds a failed attempt to the endpoint's run and disables
// it when the run is long enough (nil: still enabled).
func (d *Deliverer) countFailure(ctx context.Context, tx pgx.Tx, c due, at time.Time) (*disabled, error) {
	var (
		off    disabled
		status string
	)
	if err := tx.QueryRow(ctx, `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
			failing_since = coalesce(failing_since, $2)
		WHERE id = $1 RETURNING consecutive_failures, failing_since, status`, c.endpointID, at).
		Scan(&off.failures, &off.since, &status); err != nil {
		return nil, err
	}
	if status != "enabled" || off.failures < d.disableAfterFailures() || at.Sub(off.since) < d.disableAfter() {
		return nil, nil
	}
	held, err := disableEndpoint(ctx, tx, c.tenant, c.endpointID, disabledFailing, at)
	if err != nil {
		return nil, err
	}
	off.held = held
	return &off, nil
}

// disableEndpoint disables an enabled endpoint and holds its undelivered
// events, saying why (webhook_deliveries.held); disabled for failing, it
// records EventEndpointDisabled. It returns how many events it held.
func disableEndpoint(ctx context.Context, tx pgx.Tx, tenant, id, reason string, now time.Time) (int64, error) {
	o, err := scanWebhook(tx.QueryRow(ctx, `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3, disabled_at = $4
		WHERE tenant_id = $1 AND id = $2 AND status = 'enabled' RETURNING `+webhookColumns, tenant, id, reason, now))
	if errors.Is(err, errNotFound) {
		return 0, nil // disabled already
	} else if err != nil {
		return 0, fmt.Errorf("disable webhook endpoint %s: %w", id, err)
	}
	tag, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET held = 'endpoint_disabled'
		WHERE endpoint_id = $1 AND delivered_at IS NULL`, id)
	if err != nil {
		return 0, fmt.Errorf("hold the events of webhook endpoint %s: %w", id, err)
	}
	if reason == disabledFailing {
		if err := recordEvent(ctx, tx, tenant, EventEndpointDisabled, id, o, eventSource{}, now); err != nil {
			return 0, err
		}
	}
	return tag.RowsAffected(), nil
}

// enableEndpoint enables a disabled endpoint with a fresh run of failures;
// the events it held are due at once. It returns how many.
func enableEndpoint(ctx context.Context, tx pgx.Tx, tenant, id string, now time.Time) (int64, error) {
	tag, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, disabled_at = NULL,
			consecutive_failures = 0, failing_since = NULL
		WHERE tenant_id = $1 AND id = $2 AND status = 'disabled'`, tenant, id)
	if err != nil || tag.RowsAffected() == 0 {
		return 0, err
	}
	tag, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET held = NULL, next_attempt_at = $2
		WHERE endpoint_id = $1 AND held IS NOT NULL AND delivered_at IS NULL`, id, now)
	if err != nil {
		return 0, fmt.Errorf("resume the events of webhook endpoint %s: %w", id, err)
	}
	return tag.RowsAffected(), nil
}

func (d *Deliverer) disableAfterFailures() int {
	if d.DisableAfterFailures > 0 {
		return d.DisableAfterFailures
	}
	return DefaultDisableAfterFailures
}

func (d *Deliverer) disableAfter() time.Duration {
	if d.DisableAfter > 0 {
		return d.DisableAfter
	}
	return DefaultDisableAfter
}

// hostOf is the host of an endpoint's URL, for logs.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return ""
}
