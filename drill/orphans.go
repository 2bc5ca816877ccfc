package drill

import (
	"context"
	"fmt"

	"github.com/bookonce/bookonce/channels/ops"
)

// Orphans are effects still live once every booking has settled that no
// booking owns: a hold not confirmed, an authorisation neither captured
// nor voided, captured money of a booking that is not confirmed and was
// not refunded. A compensation that gave up (a void or release whose
// retries ran out in an outage) leaves one. Effects of a booking with an
// open review case are owned by that case (a person decides, the saga
// compensates on the decision or its timeout): they are counted apart and
// do not fail the drill.
type Orphans struct {
	Holds          int      `json:"holds"`
	Authorizations int      `json:"authorizations"`
	Captures       int      `json:"unrefunded_captures_without_booking"`
	AwaitingReview int      `json:"awaiting_review"`
	Examples       []string `json:"examples,omitempty"`
}

// Total is the number of orphans that fail the drill.
func (o Orphans) Total() int { return o.Holds + o.Authorizations + o.Captures }

// orphanQueries find each kind of live effect with the reference of the
// booking it belongs to.
var orphanQueries = []struct {
	kind string
	sql  string
}{
	{"hold", `SELECT reference, id FROM calendar_reservations WHERE status = 'held'`},
	{"authorization", `SELECT coalesce(booking_reference, ''), id FROM payment_intents WHERE status = 'requires_capture'`},
	{"capture", `SELECT coalesce(p.booking_reference, ''), p.id FROM payment_intents p
		WHERE p.status = 'succeeded' AND p.amount_refunded < p.amount_captured
		AND NOT EXISTS (SELECT 1 FROM calendar_reservations r WHERE r.reference = p.booking_reference AND r.status = 'confirmed')`},
}

// orphans counts the live effects left behind (see Orphans).
func (e *env) orphans(ctx context.Context) (Orphans, error) {
	var o Orphans
	owned, err := e.stringSet(ctx, `SELECT workflow_id FROM review_cases WHERE status = 'open'`)
	if err != nil {
		return o, err
	}
	for _, q := range orphanQueries {
		rows, err := e.pool.Query(ctx, q.sql)
		if err != nil {
			return o, fmt.Errorf("orphaned %ss: %w", q.kind, err)
		}
		for rows.Next() {
			var ref, id string
			if err := rows.Scan(&ref, &id); err != nil {
				rows.Close()
				return o, err
			}
			if owned[ref] || owned["payment:"+ref] {
				o.AwaitingReview++
				continue
			}
			switch q.kind {
			case "hold":
				o.Holds++
			case "authorization":
				o.Authorizations++
			default:
				o.Captures++
			}
			if len(o.Examples) < 10 {
				o.Examples = append(o.Examples, fmt.Sprintf("%s %s of %s", q.kind, id, ops.MaskPhones(ref)))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return o, err
		}
	}
	return o, nil
}
