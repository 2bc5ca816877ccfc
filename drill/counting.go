package drill

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookonce/bookonce/internal/mask"
	"github.com/bookonce/bookonce/outbox"
	"github.com/bookonce/bookonce/twilio"
	"github.com/bookonce/bookonce/workflows/lifecycle"
)

// Every duplicate check counts effects that some constraint does NOT make
// impossible: cancelled and released rows, voided and refunded payments,
// other references for the same wish, and every message at Twilio. A
// check that a unique index or an exclusion constraint already enforces
// (one active reservation per reference, one live authorisation per
// reference and step, one outbox row per reference and kind, no two active
// reservations of one resource overlapping) can never fail and measures
// nothing; docs/chaos.md names the ones this replaced.

// wishOfReservation groups reservations by what the customer asked for:
// customer, service and start, whatever the reference.
const wishOfReservation = `tenant_id, customer, service, lower(slot)`

// activeUntil is when a reservation stopped blocking its slot: never for
// an active one, its update (release, cancel) or its expiry otherwise.
const activeUntil = `CASE WHEN %[1]s.status IN ('held', 'confirmed') THEN 'infinity'::timestamptz
	WHEN %[1]s.status = 'expired' THEN least(%[1]s.updated_at, %[1]s.hold_expires_at) ELSE %[1]s.updated_at END`

var duplicateQueries = []struct {
	name, effect, sql string
	// again: the query takes the rebooks' new references as $1.
	again bool
}{
	// Every reservation that became a booking, whatever its status now
	// (a second booking later cancelled is still a second booking) and
	// whatever its reference (a second saga, the front desk). A rebook's
	// booking (the customer cancelled or moved away, then asked for the
	// slot again: a new wish) counts apart, in a group of its own.
	{"calendar_bookings_per_wish", "calendar", `SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM calendar_reservations
		WHERE booking_id IS NOT NULL GROUP BY ` + wishOfReservation + `, reference = ANY($1) HAVING count(*) > 1) x`, true},
	// Two references holding the same wish at the same time (not both
	// booked: that is the check above). A later attempt after a failed
	// one does not overlap the failed one's hold, so it is not counted.
	{"calendar_concurrent_holds_per_wish", "calendar", `SELECT count(DISTINCT b.id) FROM calendar_reservations a JOIN calendar_reservations b
		ON a.tenant_id = b.tenant_id AND a.customer = b.customer AND a.service = b.service AND lower(a.slot) = lower(b.slot)
		AND a.reference < b.reference
		AND tstzrange(a.created_at, greatest(a.created_at, ` + fmt.Sprintf(activeUntil, "a") + `)) && tstzrange(b.created_at, greatest(b.created_at, ` + fmt.Sprintf(activeUntil, "b") + `))
		WHERE NOT (a.booking_id IS NOT NULL AND b.booking_id IS NOT NULL)`, false},
	// Every intent ever authorised (a charge exists: live, captured,
	// voided or refunded alike), per wish across references.
	{"payment_authorisations_per_wish", "payment", `SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM payment_intents p
		LEFT JOIN (SELECT DISTINCT tenant_id, workflow_id, customer, service, slot_start FROM booking_intents) b ON b.tenant_id = p.tenant_id AND b.workflow_id = p.booking_reference
		WHERE p.charge_id IS NOT NULL
		GROUP BY p.tenant_id, coalesce(b.customer || '|' || b.service || '|' || b.slot_start::text, 'ref:' || coalesce(p.booking_reference, p.id)),
			coalesce(p.step, '') HAVING count(*) > 1) x`, false},
	// More than one refund of one intent (partial refunds are not capped
	// by the refunded <= captured check).
	{"refunds_per_intent", "payment", `SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM refunds
		GROUP BY tenant_id, payment_intent_id HAVING count(*) > 1) x`, false},
}

// Duplicates is the breakdown of the duplicate effects by check.
type Duplicates map[string]float64

// duplicates counts duplicate side effects from the downstream tables and
// every message at the fake Twilio.
func (e *env) duplicates(ctx context.Context) (Effects, Duplicates, []string, error) {
	var d Effects
	by := Duplicates{}
	again, err := e.rebookRefs(ctx)
	if err != nil {
		return d, by, nil, fmt.Errorf("count duplicates (rebooks): %w", err)
	}
	for _, q := range duplicateQueries {
		var args []any
		if q.again {
			args = append(args, again)
		}
		n, err := e.count(ctx, q.sql, args...)
		if err != nil {
			return d, by, nil, fmt.Errorf("count duplicates (%s): %w", q.name, err)
		}
		by[q.name] = float64(n)
		switch q.effect {
		case "calendar":
			d.Calendar += float64(n)
		case "payment":
			d.Payment += float64(n)
		}
	}
	kinds, err := e.pairs(ctx, `SELECT id, CASE WHEN reference = ANY($1) THEN 'again:' ELSE '' END || kind FROM outbox_messages`, again)
	if err != nil {
		return d, by, nil, fmt.Errorf("count duplicates (outbox kinds): %w", err)
	}
	repeated := repeatedMessages(e.twilio.Messages(), kinds)
	by["twilio_messages_per_customer_and_text"] = float64(beyondFirst(repeated))
	d.Messages = by["twilio_messages_per_customer_and_text"]
	if d.Calendar+d.Messages == 0 {
		return d, by, nil, nil
	}
	examples, err := e.duplicateExamples(ctx, again, repeated)
	if err != nil {
		return d, by, nil, fmt.Errorf("name the duplicates: %w", err)
	}
	return d, by, examples, nil
}

// bookingIDs are the booking numbers a text names: two confirmations of
// one wish under two references differ only there.
var bookingIDs = regexp.MustCompile(`bk_[A-Za-z0-9]+`)

// duplicateMessages counts every message at Twilio, with or without an
// outbox row, beyond the first of its identity (repeatedMessages).
func duplicateMessages(msgs []twilio.FakeMessage, kinds map[string]string) int {
	return beyondFirst(repeatedMessages(msgs, kinds))
}

// beyondFirst counts the sends of repeated beyond the first of each.
func beyondFirst(repeated map[string]int) int {
	n := 0
	for _, c := range repeated {
		n += c - 1
	}
	return n
}

// repeatedMessages are the identities of the messages at Twilio sent more
// than once, with how often. A reply to an inbound message is one per
// outbox row (two customer messages may earn the same words twice); a
// reminder one per text and kind (two offsets may say the same words);
// anything else (confirmations, offers of alternatives, messages no
// outbox row names) is one per recipient and text, booking numbers left
// out.
func repeatedMessages(msgs []twilio.FakeMessage, kinds map[string]string) map[string]int {
	seen := map[string]int{}
	for _, m := range msgs {
		id := callbackOutboxID(m.StatusCallback)
		identity := "text " + m.To + "|" + bookingIDs.ReplaceAllString(m.Body, "bk_")
		if strings.Contains(kinds[id], "reply:") {
			identity = "row " + id
		}
		kind, again := strings.CutPrefix(kinds[id], "again:")
		if reminderKind(kind) {
			identity += "|" + kind // two offsets' reminders may say the same
		}
		if again {
			identity += "|again" // a rebook's messages may say what the first booking's said
		}
		seen[identity]++
	}
	for identity, c := range seen {
		if c < 2 {
			delete(seen, identity)
		}
	}
	return seen
}

// DoubleBooked counts bookings the customers were told about (every
// booking number in a message at Twilio or a reserved confirmation) that share a resource and time,
// whatever their status now, and bookings told but not in the calendar.
type DoubleBooked struct {
	// Told are the booking numbers that reached a customer.
	Told int `json:"told"`
	// Resources are pairs of told bookings on one resource whose times
	// overlap (must be 0).
	Resources int `json:"resources"`
	// NotBooked are told bookings that are not confirmed in the calendar
	// (released, cancelled or missing; must be 0).
	NotBooked int      `json:"not_booked"`
	Examples  []string `json:"examples,omitempty"`
}

// doubleBooked compares every booking a customer was told about against
// all others, cancelled ones included: the exclusion constraint only
// covers the ones active at the same time. A booking the customer
// cancelled or moved (and was told so) frees its slot for another.
func (e *env) doubleBooked(ctx context.Context) (DoubleBooked, error) {
	told := map[string]bool{}
	for _, m := range e.twilio.Messages() {
		for _, id := range bookingIDs.FindAllString(m.Body, -1) {
			told[id] = true
		}
	}
	// A confirmation reserved but not (yet) at Twilio promised it too.
	bodies, err := e.confirmationBodies(ctx)
	if err != nil {
		return DoubleBooked{}, fmt.Errorf("confirmations: %w", err)
	}
	for _, b := range bodies {
		for _, id := range bookingIDs.FindAllString(b, -1) {
			told[id] = true
		}
	}
	ids := make([]string, 0, len(told))
	for id := range told {
		ids = append(ids, id)
	}
	r := DoubleBooked{Told: len(ids)}
	rows, err := e.pool.Query(ctx, `SELECT a.booking_id || ' and ' || b.booking_id || ' on ' || a.resource_id FROM calendar_reservations a
		JOIN calendar_reservations b ON a.tenant_id = b.tenant_id AND a.resource_id = b.resource_id AND a.slot && b.slot AND a.id < b.id
		WHERE a.booking_id = ANY($1) AND b.booking_id = ANY($1)
		AND NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.tenant_id = a.tenant_id AND (
			(a.status = 'cancelled' AND o.reference = split_part(a.reference, '#', 1)) OR
			(b.status = 'cancelled' AND o.reference = split_part(b.reference, '#', 1)))
			AND (o.kind = $2 OR o.kind LIKE $3 || '%'))`, ids, lifecycle.MessageKindCancellation, lifecycle.MessageKindRescheduled)
	if err != nil {
		return r, fmt.Errorf("double-booked resources: %w", err)
	}
	for rows.Next() {
		var pair string
		if err := rows.Scan(&pair); err != nil {
			rows.Close()
			return r, err
		}
		r.Resources++
		if len(r.Examples) < 10 {
			r.Examples = append(r.Examples, "double-booked: "+pair)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, err
	}
	// A booking its customer cancelled or moved was told, then undone on
	// purpose: the change checks judge it.
	var changed []string
	for _, a := range e.changes.list() {
		changed = append(changed, a.workflowID)
	}
	confirmed, err := e.count(ctx, `SELECT count(DISTINCT booking_id) FROM calendar_reservations WHERE booking_id = ANY($1)
		AND (status = 'confirmed' OR reference = ANY($2))`, ids, changed)
	if err != nil {
		return r, fmt.Errorf("told bookings: %w", err)
	}
	r.NotBooked = len(ids) - confirmed
	return r, nil
}

// confirmationBodies are the texts of the reserved confirmations,
// opened with the drill's payload keys when the outbox sealed them.
func (e *env) confirmationBodies(ctx context.Context) ([]string, error) {
	rows, err := e.pool.Query(ctx, `SELECT id, recipient, body, sealed FROM outbox_messages WHERE kind = 'confirmation' AND state <> 'withdrawn'`)
	if err != nil {
		return nil, err
	}
	store := outbox.Store{Sealer: e.cfg.PayloadCodec}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var id, recipient, body string
		var sealed []byte
		if err := r.Scan(&id, &recipient, &body, &sealed); err != nil {
			return "", err
		}
		_, body, _, err := store.Open(id, recipient, body, nil, sealed)
		return body, err
	})
}

// duplicateExamples names what the calendar and message checks counted,
// so that a failing drill says which wish was booked twice and which text
// went out twice, not only how many: every wish with more than one
// booking (its references, statuses and times) and every repeated
// message identity (numbers masked). again are the rebooks' references,
// repeated the messages sent more than once.
func (e *env) duplicateExamples(ctx context.Context, again []string, repeated map[string]int) ([]string, error) {
	rows, err := e.pool.Query(ctx, `SELECT customer || ' ' || service || ' ' || to_char(lower(slot), 'YYYY-MM-DD HH24:MI') || ': ' ||
		string_agg(reference || ' ' || status || ' at ' || to_char(created_at, 'HH24:MI:SS.MS'), ', ' ORDER BY created_at)
		FROM calendar_reservations WHERE booking_id IS NOT NULL GROUP BY `+wishOfReservation+`, reference = ANY($1) HAVING count(*) > 1`, again)
	if err != nil {
		return nil, err
	}
	wishes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range wishes {
		out = append(out, "booked twice: "+mask.Phones(w))
	}
	for identity, n := range repeated {
		out = append(out, fmt.Sprintf("sent %d times: %s", n, mask.Phones(identity)))
	}
	return out, nil
}

// refusedByProvider counts the messages Twilio accepted and then failed,
// by error code, with an example of each code, and those sent as
// approved templates.
func refusedByProvider(msgs []twilio.FakeMessage) (refused map[int]int, examples []string, templates int) {
	refused = map[int]int{}
	for _, m := range msgs {
		if m.ErrorCode != 0 {
			if refused[m.ErrorCode] == 0 {
				examples = append(examples, fmt.Sprintf("%d to %s at %s: %.50q", m.ErrorCode, mask.Phones(m.To), m.DateCreated.Format(time.TimeOnly), m.Body))
			}
			refused[m.ErrorCode]++
		}
		if m.ContentSid != "" {
			templates++
		}
	}
	return refused, examples, templates
}

func sumCounts(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
