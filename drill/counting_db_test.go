package drill

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/twilio"
)

// TestStrictCountsSeeEffectsTheConstraintsAllow: effects no constraint
// forbids (a second booking of one wish under another reference, later
// cancelled; a second authorisation, later voided; two references holding
// one wish at once; a customer told of a booking that shares its bay with
// another told booking) are counted. The old checks saw none of them.
func TestStrictCountsSeeEffectsTheConstraintsAllow(t *testing.T) {
	ctx := context.Background()
	pool := testsupport.Database(t)
	fake := twilio.NewFakeServer()
	t.Cleanup(fake.Close)
	e := &env{pool: pool, twilio: fake}
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	slot := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	reservation := `INSERT INTO calendar_reservations (id, tenant_id, resource_id, service, customer, reference, slot, status,
		hold_expires_at, booking_id, created_at, updated_at) VALUES ($1, 'demo', $2, 'inspection', $3, $4,
		tstzrange($5::timestamptz, $5::timestamptz + interval '90 minutes'), $6, $7::timestamptz + interval '10 minutes', $8, $7, $9)`
	// One wish booked under two references; the first booking cancelled
	// before the second was made (so the exclusion constraint allowed it).
	exec(reservation, "res_1", "bay-1", "+49151A", "wf-a", slot, "cancelled", t0, "bk_1", t0.Add(time.Minute))
	exec(reservation, "res_2", "bay-1", "+49151A", "wf-b", slot, "confirmed", t0.Add(2*time.Minute), "bk_2", t0.Add(3*time.Minute))
	// Another wish held by two references at the same time, both released.
	later := slot.Add(3 * time.Hour)
	exec(reservation, "res_3", "bay-2", "+49151B", "wf-c", later, "released", t0, nil, t0.Add(10*time.Minute))
	exec(reservation, "res_4", "bay-1", "+49151B", "wf-d", later, "released", t0.Add(5*time.Minute), nil, t0.Add(6*time.Minute))
	// Both bookings of the first wish were confirmed to the customer.
	for i, bk := range []string{"bk_1", "bk_2"} {
		exec(`INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, idempotency_key)
			VALUES ($1, 'demo', $2, 'confirmation', 'whatsapp', '+49151A', $3, 'sent', $1)`,
			[]string{"msg_1", "msg_2"}[i], []string{"wf-a", "wf-b"}[i], "Ihr Termin ist bestätigt: Inspektion (Buchung "+bk+").")
	}
	// Its deposit authorised under both references; the first voided.
	for _, ref := range []string{"wf-a", "wf-b"} {
		exec(`INSERT INTO booking_intents (tenant_id, intent_id, customer, service, slot_start, channel, workflow_id)
			VALUES ('demo', $1, '+49151A', 'inspection', $2, 'whatsapp', $1)`, ref, slot)
	}
	intent := `INSERT INTO payment_intents (id, tenant_id, amount, currency, status, capture_method, amount_captured, charge_id,
		metadata, created_at, captured_at, canceled_at) VALUES ($1, 'demo', 2000, 'eur', $2, 'manual', $3, $4,
		jsonb_build_object('booking_reference', $5::text, 'step', 'deposit'), $6, $7, $8)`
	exec(intent, "pi_1", "canceled", 0, "ch_1", "wf-a", t0, nil, t0.Add(time.Minute))
	exec(intent, "pi_2", "succeeded", 2000, "ch_2", "wf-b", t0, t0.Add(time.Minute), nil)
	// A declined attempt has no charge: not an authorisation.
	exec(intent, "pi_3", "requires_payment_method", 0, nil, "wf-b", t0, nil, nil)

	d, by, _, err := e.duplicates(ctx)
	require.NoError(t, err)
	require.Equal(t, Duplicates{"calendar_bookings_per_wish": 1, "calendar_concurrent_holds_per_wish": 1,
		"payment_authorisations_per_wish": 1, "refunds_per_intent": 0, "twilio_messages_per_customer_and_text": 0}, by)
	require.Equal(t, Effects{Calendar: 2, Payment: 1}, d)

	db, err := e.doubleBooked(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, db.Told)
	require.Equal(t, 1, db.Resources, "bay-1 was promised twice for one time, once by a booking now cancelled")
	require.Equal(t, 1, db.NotBooked, "bk_1 was told but is cancelled")
}
