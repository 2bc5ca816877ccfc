package drill

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/bookonce/bookonce/internal/mask"
)

// Orphans are effects still live once every booking has settled that no
// booking owns: a hold not confirmed, an authorisation neither captured
// nor voided, captured money of a booking that is not confirmed and was
// not refunded. A compensation that gave up, or a saga that was
// terminated, leaves one; the reconciler must sweep it. Effects of an
// appointment still running, or of a booking with an open review case,
// are owned (a person or the saga decides): counted apart, they do not
// fail the drill.
type Orphans struct {
	Holds          int `json:"holds"`
	Authorisations int `json:"authorisations"`
	Captures       int `json:"unrefunded_captures_without_booking"`
	// BookingsUnpaid are confirmed bookings of a service with a deposit
	// whose deposit was never captured (or was refunded): a booking
	// without its charge, the mirror image of a charge without booking.
	BookingsUnpaid int      `json:"bookings_without_deposit"`
	OfRunning      int      `json:"of_running_appointments"`
	AwaitingReview int      `json:"awaiting_review"`
	Examples       []string `json:"examples,omitempty"`
	// WaitedSeconds is how long the drill gave the reconciler after
	// every booking had settled.
	WaitedSeconds float64 `json:"waited_seconds"`
}

// Total is the number of orphans that fail the drill.
func (o Orphans) Total() int { return o.Holds + o.Authorisations + o.Captures + o.BookingsUnpaid }

// orphanQueries find each kind of live effect with the reference of the
// booking it belongs to.
var orphanQueries = []struct {
	kind string
	sql  string
}{
	{"hold", `SELECT reference, id FROM calendar_reservations WHERE status = 'held'`},
	{"authorisation", `SELECT coalesce(booking_reference, ''), id FROM payment_intents WHERE status = 'requires_capture'`},
	{"capture", `SELECT coalesce(p.booking_reference, ''), p.id FROM payment_intents p
		WHERE p.status = 'succeeded' AND p.amount_refunded < p.amount_captured
		AND NOT EXISTS (SELECT 1 FROM calendar_reservations r WHERE r.reference = p.booking_reference AND r.status = 'confirmed')
		-- A booking cancelled through its lifecycle kept its deposit by policy; the change checks judge that.
		AND NOT EXISTS (SELECT 1 FROM outbox_messages m WHERE m.reference = p.booking_reference AND m.kind = 'cancellation')`},
	// The id is the wish's key: a moved booking's new reservation may
	// carry a reference of its own, without a deposit under it.
	{"unpaid booking", `SELECT r.reference, r.customer || '|' || r.service || '|' || to_char(lower(r.slot) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM calendar_reservations r
		JOIN calendar_services s ON s.tenant_id = r.tenant_id AND s.id = r.service
		WHERE r.status = 'confirmed' AND s.deposit_amount IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM payment_intents p WHERE p.tenant_id = r.tenant_id AND p.booking_reference = r.reference
			AND p.amount_captured > p.amount_refunded)`},
}

// orphans counts the live effects left behind, polling up to wait for the
// reconciler to sweep those of closed appointments.
func (e *env) orphans(ctx context.Context, wait time.Duration) (Orphans, error) {
	started := time.Now()
	for {
		o, err := e.countOrphans(ctx)
		if err != nil || o.Total() == 0 || time.Since(started) >= wait || ctx.Err() != nil {
			o.WaitedSeconds = time.Since(started).Round(time.Second).Seconds()
			return o, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// countOrphans counts once (see Orphans).
func (e *env) countOrphans(ctx context.Context) (Orphans, error) {
	var o Orphans
	owned, err := e.stringSet(ctx, `SELECT workflow_id FROM review_cases WHERE status = 'open'`)
	if err != nil {
		return o, err
	}
	moved, movedTo := map[string]bool{}, map[string]bool{}
	for _, a := range e.changes.list() {
		if a.change.Kind.moves() {
			moved[a.workflowID], movedTo[wishKey(a.scenario.Customer, a.wish.Service, a.change.To)] = true, true
		}
	}
	for _, q := range orphanQueries {
		live, err := e.livePairs(ctx, q.sql)
		if err != nil {
			return o, fmt.Errorf("orphaned %ss: %w", q.kind, err)
		}
		for _, l := range live {
			ref, id := l[0], l[1]
			if q.kind == "capture" && moved[ref] || q.kind == "unpaid booking" && movedTo[id] {
				continue // a moved booking's deposit stays under its first reference: the change checks judge it
			}
			if owned[ref] || owned["payment:"+ref] {
				o.AwaitingReview++
				continue
			}
			running, err := e.running(ctx, ref)
			if err != nil {
				return o, err
			}
			if running {
				o.OfRunning++
				continue
			}
			switch q.kind {
			case "hold":
				o.Holds++
			case "authorisation":
				o.Authorisations++
			case "unpaid booking":
				o.BookingsUnpaid++
			default:
				o.Captures++
			}
			if len(o.Examples) < 10 {
				o.Examples = append(o.Examples, fmt.Sprintf("%s %s of %s", q.kind, id, mask.Phones(ref)))
			}
		}
	}
	sort.Strings(o.Examples)
	return o, nil
}

// livePairs reads (reference, id) rows.
func (e *env) livePairs(ctx context.Context, sql string) ([][2]string, error) {
	rows, err := e.pool.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var p [2]string
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
