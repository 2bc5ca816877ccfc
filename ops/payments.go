package ops

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/mask"
)

// unmatchedView is a payment webhook no running payment workflow took.
type unmatchedView struct {
	EventID, Type, Reference string
	Unattributed             bool
	ReceivedAt               time.Time
	Age                      string
}

// UnmatchedLimit is how many unmatched payment events the page lists.
const UnmatchedLimit = 50

// loadUnmatched lists the most recent payment events the gateway recorded
// as unmatched: the tenant's own, and those whose reference names no
// known tenant (nobody else would ever see them). A person decides what
// they mean (a link paid after its booking ended, say); they are never
// dropped.
func (p *Page) loadUnmatched(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	rows, err := p.Pool.Query(ctx, `SELECT event_id, kind, coalesce(payload->>'reference', ''), tenant_id = '-', received_at
		FROM inbox_events WHERE provider = 'stripe' AND state = 'unmatched' AND tenant_id IN ($1, '-')
		ORDER BY received_at DESC LIMIT $2`, tenant, UnmatchedLimit)
	if err != nil {
		return fmt.Errorf("list unmatched payment events: %w", err)
	}
	d.Unmatched, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (unmatchedView, error) {
		var v unmatchedView
		err := r.Scan(&v.EventID, &v.Type, &v.Reference, &v.Unattributed, &v.ReceivedAt)
		v.Reference = mask.Phones(v.Reference)
		v.Age = age(now, v.ReceivedAt)
		return v, err
	})
	if err != nil {
		return fmt.Errorf("list unmatched payment events: %w", err)
	}
	return nil
}

// disabledEndpointView is a webhook endpoint of the tenant that is
// disabled: by the payment API's deliverer for failing, or by the tenant.
type disabledEndpointView struct {
	ID, Host, Reason string
	Held             int
	DisabledAt       time.Time
	Age              string
}

// loadDisabledEndpoints lists the tenant's disabled webhook endpoints with
// the events held for them: the shop's own systems are not hearing about
// payments. The URL is shown by its host alone (a path or query may carry
// a token).
func (p *Page) loadDisabledEndpoints(ctx context.Context, d *pageData, tenant string, now time.Time) error {
	rows, err := p.Pool.Query(ctx, `SELECT e.id, e.url, e.disabled_reason, e.disabled_at,
			(SELECT count(*) FROM webhook_deliveries w WHERE w.endpoint_id = e.id AND w.held IS NOT NULL AND w.delivered_at IS NULL)
		FROM webhook_endpoints e WHERE e.tenant_id = $1 AND e.status = 'disabled'
		ORDER BY e.disabled_at DESC LIMIT $2`, tenant, UnmatchedLimit)
	if err != nil {
		return fmt.Errorf("list disabled webhook endpoints: %w", err)
	}
	d.Disabled, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (disabledEndpointView, error) {
		var v disabledEndpointView
		var raw string
		err := r.Scan(&v.ID, &raw, &v.Reason, &v.DisabledAt, &v.Held)
		if u, perr := url.Parse(raw); perr == nil {
			v.Host = u.Host
		}
		v.Age = age(now, v.DisabledAt)
		return v, err
	})
	if err != nil {
		return fmt.Errorf("list disabled webhook endpoints: %w", err)
	}
	return nil
}
