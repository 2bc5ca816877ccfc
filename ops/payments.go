package ops

import (
	"context"
	"fmt"
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
