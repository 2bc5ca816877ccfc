package testsupport

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/twilio"
)

// TestCountEffectsSeesADuplicateUnderAnotherReference: a booking, then a
// duplicate the per-reference count of the tests before (rows under the
// booking's own reference, each capped at one by a unique index) cannot
// see: a second confirmed reservation and a second confirmation under
// another reference, and one outbox row sent twice to Twilio. The
// per-reference count stays 1; CountEffects reports 2.
func TestCountEffectsSeesADuplicateUnderAnotherReference(t *testing.T) {
	t.Parallel()
	const customer, ref, other = "+4915112349911", "appointment:demo:effects-1", "appointment:demo:effects-2"
	cases := []duplicateCase{
		{
			name: "a second confirmed reservation under another reference",
			duplicate: func(t *testing.T, f effectsFixture) {
				f.reserve(t, "res-2", "bay-2", other, true)
			},
			perReference: `SELECT count(*) FROM calendar_reservations WHERE reference = $1 AND status = 'confirmed'`,
			counted:      func(e Effects) int { return e.Reservations["confirmed"] },
		},
		{
			name: "a second confirmation under another reference",
			duplicate: func(t *testing.T, f effectsFixture) {
				f.message(t, "msg-2", other, "sent")
			},
			perReference: `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND state <> 'withdrawn'`,
			counted:      func(e Effects) int { return e.Messages },
		},
		{
			name: "one outbox row sent twice to Twilio",
			duplicate: func(t *testing.T, f effectsFixture) {
				f.send(t)
			},
			perReference: `SELECT count(*) FROM outbox_messages WHERE reference = $1 AND state <> 'withdrawn'`,
			counted:      func(e Effects) int { return e.Messages },
			atTwilio:     true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := effectsFixture{pool: Database(t), fake: twilio.NewFakeServer(), customer: customer, slot: Slot(t, time.Tuesday, 10)}
			t.Cleanup(f.fake.Close)
			f.reserve(t, "res-1", "bay-1", ref, false)
			f.message(t, "msg-1", ref, "sent")
			f.send(t)
			var fake *twilio.FakeServer
			if tc.atTwilio {
				fake = f.fake
			}
			count := func() int { return tc.counted(CountEffects(t, f.pool, fake, "demo", customer, f.slot)) }
			require.Equal(t, 1, f.count(t, tc.perReference, ref), "the booking, per reference")
			require.Equal(t, 1, count(), "the booking, per customer and slot")

			tc.duplicate(t, f)
			require.Equal(t, 1, f.count(t, tc.perReference, ref), "the per-reference count cannot see the duplicate")
			require.Equal(t, 2, count(), "the duplicate, per customer and slot")
		})
	}
}

// duplicateCase is one duplicate CountEffects must see.
type duplicateCase struct {
	name      string
	duplicate func(t *testing.T, f effectsFixture)
	// perReference is the old count under the booking's reference: the
	// rows a unique index caps.
	perReference string
	counted      func(Effects) int
	atTwilio     bool // count the messages at the fake Twilio, not the outbox
}

// effectsFixture writes a booking's effects directly, as the downstream
// systems would have stored them.
type effectsFixture struct {
	pool     *pgxpool.Pool
	fake     *twilio.FakeServer
	customer string
	slot     time.Time
}

func (f effectsFixture) reserve(t *testing.T, id, resource, ref string, deliberate bool) {
	t.Helper()
	_, err := f.pool.Exec(context.Background(), `INSERT INTO calendar_reservations
		(id, tenant_id, resource_id, service, customer, reference, slot, status, hold_expires_at, booking_id, deliberate_second)
		VALUES ($1, 'demo', $2, 'tire-change', $3, $4, tstzrange($5::timestamptz, $5::timestamptz + interval '1 hour'), 'confirmed', $5::timestamptz, 'bk-' || $1, $6)`,
		id, resource, f.customer, ref, f.slot, deliberate)
	require.NoError(t, err)
}

func (f effectsFixture) message(t *testing.T, id, ref, state string) {
	t.Helper()
	_, err := f.pool.Exec(context.Background(), `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, state, idempotency_key)
		VALUES ($1, 'demo', $2, 'confirmation', 'whatsapp', $3, 'Ihr Termin ist bestätigt', $4, 'key-' || $1)`,
		id, ref, f.customer, state)
	require.NoError(t, err)
}

// send hands the confirmation to the fake Twilio, as the outbox relay does.
func (f effectsFixture) send(t *testing.T) {
	t.Helper()
	c := twilio.New(f.fake.AccountSID, f.fake.AuthToken, "+4930123456", twilio.WithBaseURL(f.fake.URL()))
	_, err := c.Send(context.Background(), "", "whatsapp:"+f.customer, "Ihr Termin ist bestätigt", "")
	require.NoError(t, err)
}

func (f effectsFixture) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}
