package stripeapi

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimSQL takes due deliveries of enabled endpoints and pushes them out
// by the lease, in one statement, so no transaction stays open across an
// HTTP call. Each share (a tenant's endpoints, or the operator's endpoint
// for the tenant) gets at most $2 in flight, counting those this deliverer
// has in flight already ($3 names those shares, $4 their counts); $5 bounds
// the batch, taken in rounds (every share's oldest first), so the free
// slots are shared out fairly when they are fewer than the shares. The
// lock re-checks that a row is still due: a concurrent deliverer that
// claimed it first has pushed it out.
const claimSQL = `WITH busy AS (SELECT * FROM unnest($3::text[], $4::int[]) AS b (share, n)),
ranked AS (
	SELECT d.endpoint_id, d.event_id, d.next_attempt_at,
		CASE WHEN starts_with(e.id, $7) THEN 'operator:' ELSE 'tenant:' END || e.tenant_id AS share,
		row_number() OVER (PARTITION BY e.tenant_id, starts_with(e.id, $7) ORDER BY d.next_attempt_at, d.event_id) AS round
	FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
	WHERE d.delivered_at IS NULL AND d.next_attempt_at <= $1 AND e.status = 'enabled'),
picked AS (
	SELECT r.endpoint_id, r.event_id FROM ranked r LEFT JOIN busy b ON b.share = r.share
	WHERE r.round <= $2 - coalesce(b.n, 0)
	ORDER BY r.round, r.next_attempt_at LIMIT $5),
locked AS (
	SELECT d.endpoint_id, d.event_id FROM webhook_deliveries d JOIN picked p USING (endpoint_id, event_id)
	WHERE d.delivered_at IS NULL AND d.next_attempt_at <= $1
	FOR UPDATE OF d SKIP LOCKED)
UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = $6
FROM locked l, webhook_endpoints e
WHERE d.endpoint_id = l.endpoint_id AND d.event_id = l.event_id AND e.id = d.endpoint_id
RETURNING d.endpoint_id, d.event_id, e.tenant_id, e.url, e.secret, d.attempts,
	CASE WHEN starts_with(e.id, $7) THEN 'operator:' ELSE 'tenant:' END || e.tenant_id`

// claim takes the due deliveries the free slots admit and takes their
// slots; each must be given back (shares.release) when it ends.
func (d *Deliverer) claim(ctx context.Context) ([]due, error) {
	names, counts, total := d.shares.busy()
	free := d.maxInFlight() - total
	if free <= 0 {
		return nil, nil
	}
	now := d.now()
	rows, err := d.Pool.Query(ctx, claimSQL, now, d.perTenant(), names, counts, free, now.Add(d.lease()), configEndpointPrefix)
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var c due
		return c, r.Scan(&c.endpointID, &c.eventID, &c.tenant, &c.url, &c.secret, &c.attempts, &c.share)
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	for _, c := range out {
		d.shares.take(c.share)
	}
	return out, nil
}

func (d *Deliverer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return DefaultDeliveryTimeout
}

// lease outlasts an attempt: two requests (Twice) and the records.
func (d *Deliverer) lease() time.Duration {
	return max(deliveryLease, 3*d.timeout())
}

func (d *Deliverer) maxInFlight() int {
	if d.MaxInFlight > 0 {
		return d.MaxInFlight
	}
	return DefaultMaxInFlight
}

func (d *Deliverer) perTenant() int {
	if d.PerTenant > 0 {
		return d.PerTenant
	}
	return DefaultPerTenant
}
