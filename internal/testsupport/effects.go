package testsupport

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// Effects is what reached the downstream systems for one customer and one
// slot, counted across every reference: the calendar reservations of the
// customer at the slot, the payment intents and refunds of the sagas that
// hold them, and the messages to the customer. An exactly-once test counts
// these, not the rows under its own reference: a unique index caps those
// at one (one active reservation per reference, one live authorisation per
// reference and step, one outbox row per reference and kind), so a
// per-reference count cannot fail, while a duplicate under another
// reference, or a relay that sends one row twice, shows up only here.
//
// A saga's effects are found through its reservations: a payment intent
// carries the saga's reference (booking_reference), not the slot, and a
// moved booking's reservation sits under "<saga>#move-n" (package
// reference). A message whose saga holds no reservation at all (a refusal,
// an "already booked", a conversation's reply) names no slot the tables
// know: it counts for the customer at every slot.
type Effects struct {
	Reservations map[string]int // calendar reservations by status
	Intents      map[string]int // payment intents by status
	Captured     int64          // amount captured, in minor units
	Refunds      int
	// Messages: with a fake Twilio, those it accepted to the customer's
	// number (on any channel, about any slot: the fake knows no slot);
	// without one, the outbox rows to the customer that were not withdrawn.
	Messages int
}

// sagasAt are the sagas (references without a move's mark) holding a
// reservation of customer ($2) at the slot starting $3 in tenant $1.
const sagasAt = `SELECT DISTINCT split_part(reference, '#move-', 1) FROM calendar_reservations
	WHERE tenant_id = $1 AND customer = $2 AND lower(slot) = $3`

// CountEffects returns the Effects of customer (as the calendar and the
// outbox store the number: E.164, without "whatsapp:") at the slot
// starting at slot in tenant. fake is the fake Twilio the test's outbox
// relay sends to, or nil when the test runs no relay; with one it first
// waits until the relay has finished with every message to the customer.
func CountEffects(t testing.TB, pool *pgxpool.Pool, fake *twilio.FakeServer, tenant, customer string, slot time.Time) Effects {
	t.Helper()
	ctx := context.Background()
	out := Effects{Reservations: map[string]int{}, Intents: map[string]int{}}
	args := []any{tenant, customer, slot}
	countBy(t, pool, `SELECT status, count(*) FROM calendar_reservations
		WHERE tenant_id = $1 AND customer = $2 AND lower(slot) = $3 GROUP BY status`, args, out.Reservations)
	countBy(t, pool, `SELECT status, count(*) FROM payment_intents
		WHERE tenant_id = $1 AND booking_reference IN (`+sagasAt+`) GROUP BY status`, args, out.Intents)
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(amount_captured), 0) FROM payment_intents
		WHERE tenant_id = $1 AND booking_reference IN (`+sagasAt+`)`, args...).Scan(&out.Captured))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM refunds r
		JOIN payment_intents p ON p.tenant_id = r.tenant_id AND p.id = r.payment_intent_id
		WHERE p.tenant_id = $1 AND p.booking_reference IN (`+sagasAt+`)`, args...).Scan(&out.Refunds))
	if fake != nil {
		out.Messages = sentTo(t, pool, fake, tenant, customer)
		return out
	}
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM outbox_messages o
		WHERE o.tenant_id = $1 AND regexp_replace(o.recipient, '^whatsapp:', '') = $2 AND o.state <> 'withdrawn'
		  AND (split_part(o.reference, '#move-', 1) IN (`+sagasAt+`)
		       OR NOT EXISTS (SELECT 1 FROM calendar_reservations r WHERE r.tenant_id = o.tenant_id
		                      AND split_part(r.reference, '#move-', 1) = split_part(o.reference, '#move-', 1)))`,
		args...).Scan(&out.Messages))
	return out
}

// countBy adds the (key, count) rows of sql to into.
func countBy(t testing.TB, pool *pgxpool.Pool, sql string, args []any, into map[string]int) {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		require.NoError(t, rows.Scan(&k, &n))
		into[k] = n
	}
	require.NoError(t, rows.Err())
}

// sentTo waits until the outbox relay has finished with every message to
// customer (none is still 'pending'), whatever its reference, and counts
// the messages the fake Twilio accepted to that number.
func sentTo(t testing.TB, pool *pgxpool.Pool, fake *twilio.FakeServer, tenant, customer string) int {
	t.Helper()
	Eventually(t, 30*time.Second, "the relay sent every message to the customer", func() bool {
		var pending int
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox_messages
			WHERE tenant_id = $1 AND regexp_replace(recipient, '^whatsapp:', '') = $2 AND state = 'pending'`,
			tenant, customer).Scan(&pending))
		return pending == 0
	})
	n := 0
	for _, m := range fake.Messages() {
		if strings.TrimPrefix(m.To, "whatsapp:") == customer {
			n++
		}
	}
	return n
}
