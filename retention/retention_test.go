package retention_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/internal/testsupport"
	"github.com/bookonce/bookonce/retention"
)

const (
	keep  = 30 * 24 * time.Hour
	phone = "+4915112345678"
)

// now is the sweep's clock: rows are dated relative to it.
var now = time.Now().UTC().Truncate(time.Second)

func sweeper(pool *pgxpool.Pool, batch int) *retention.Sweeper {
	return &retention.Sweeper{Pool: pool, Retention: keep, Batch: batch, Metrics: retention.NewMetrics(prometheus.NewRegistry()),
		Now: func() time.Time { return now }}
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	_, err := pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// sealedStandIn stands for a sealed blob: the sweep drops it unread.
const sealedStandIn = `'\x0101410000'::bytea`

// inbox records a WhatsApp delivery from phone, received age ago, with a
// sealed copy as well (a row cannot have both; the sweep must drop both).
func inbox(t *testing.T, pool *pgxpool.Pool, id, state string, age time.Duration) {
	payload := fmt.Sprintf(`{"tenant":"demo","customer":%q,"event":{"event_id":%q,"text":"Reifenwechsel Dienstag"}}`, phone, id)
	exec(t, pool, `INSERT INTO inbox_events (provider, event_id, tenant_id, kind, customer, channel, payload, sealed, state, received_at)
		VALUES ('twilio', $1, 'demo', '/webhooks/twilio/whatsapp', $2, 'whatsapp', $3, `+sealedStandIn+`, $4, $5)`, id, phone, payload, state, now.Add(-age))
}

// outboxMsg reserves a message to phone whose state changed age ago.
func outboxMsg(t *testing.T, pool *pgxpool.Pool, id, state string, age time.Duration) {
	exec(t, pool, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, sealed, state, idempotency_key, created_at, updated_at, last_error)
		VALUES ($1, 'demo', 'appointment:demo:'||$1, 'confirmation', 'whatsapp', $2, 'Ihr Termin am Dienstag', `+sealedStandIn+`, $3, 'key-'||$1, $4, $4, 'To '||$2)`,
		id, phone, state, now.Add(-age))
}

type inboxRow struct {
	Customer, Payload, State string
	Sealed, Redacted         bool
}

func readInbox(t *testing.T, pool *pgxpool.Pool, id string) inboxRow {
	t.Helper()
	var r inboxRow
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT customer, payload::text, state, sealed IS NOT NULL, redacted_at IS NOT NULL
		FROM inbox_events WHERE provider = 'twilio' AND event_id = $1`, id).Scan(&r.Customer, &r.Payload, &r.State, &r.Sealed, &r.Redacted))
	return r
}

type outboxRow struct {
	Recipient, Body, State, LastError string
	Sealed, Redacted                  bool
}

func readOutbox(t *testing.T, pool *pgxpool.Pool, id string) outboxRow {
	t.Helper()
	var r outboxRow
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT recipient, body, state, coalesce(last_error, ''), sealed IS NOT NULL, redacted_at IS NOT NULL
		FROM outbox_messages WHERE id = $1`, id).Scan(&r.Recipient, &r.Body, &r.State, &r.LastError, &r.Sealed, &r.Redacted))
	return r
}

// TestSweepRedactsInboxAndOutboxOlderThanRetention: delivered inbox rows
// and sent, delivered or failed messages older than the retention lose
// the phone number and text and keep key and state; newer rows, rows
// still to be relayed or sent, and rows waiting for a person are
// untouched. A second sweep changes nothing.
func TestSweepRedactsInboxAndOutboxOlderThanRetention(t *testing.T) {
	pool := testsupport.Database(t)
	old, recent := keep+time.Hour, keep-time.Hour
	inboxCases := []struct {
		id, state string
		age       time.Duration
		redacted  bool
	}{
		{"SMold", "delivered", old, true},
		{"SMrecent", "delivered", recent, false},
		{"SMpending", "pending", old, false},
		{"SMunmatched", "unmatched", old, false},
	}
	for _, c := range inboxCases {
		inbox(t, pool, c.id, c.state, c.age)
	}
	outboxCases := []struct {
		id, state string
		age       time.Duration
		redacted  bool
	}{
		{"msg_sent", "sent", old, true},
		{"msg_delivered", "delivered", old, true},
		{"msg_failed", "failed", old, true},
		{"msg_recent", "delivered", recent, false},
		{"msg_pending", "pending", old, false},
		{"msg_review", "review", old, false},
	}
	for _, c := range outboxCases {
		outboxMsg(t, pool, c.id, c.state, c.age)
	}
	s := sweeper(pool, 0)
	counts, ran, err := s.Sweep(context.Background())
	require.NoError(t, err)
	require.True(t, ran)
	require.Equal(t, 1, counts[retention.TableInbox])
	require.Equal(t, 3, counts[retention.TableOutbox])
	require.Equal(t, 3.0, testutil.ToFloat64(s.Metrics.Redacted(retention.TableOutbox)))

	for _, c := range inboxCases {
		got := readInbox(t, pool, c.id)
		require.Equal(t, c.state, got.State, c.id)
		require.Equal(t, c.redacted, got.Redacted, c.id)
		if c.redacted {
			require.Equal(t, inboxRow{Customer: "", Payload: "{}", State: c.state, Redacted: true}, got, c.id)
		} else {
			require.Equal(t, phone, got.Customer, c.id)
			require.Contains(t, got.Payload, "Reifenwechsel", c.id)
			require.True(t, got.Sealed, c.id)
		}
	}
	for _, c := range outboxCases {
		got := readOutbox(t, pool, c.id)
		if c.redacted {
			require.Equal(t, outboxRow{State: c.state, Redacted: true}, got, c.id)
		} else {
			require.Equal(t, outboxRow{Recipient: phone, Body: "Ihr Termin am Dienstag", State: c.state, LastError: "To " + phone, Sealed: true}, got, c.id)
		}
	}

	before := snapshot(t, pool)
	counts, _, err = s.Sweep(context.Background())
	require.NoError(t, err)
	require.Zero(t, counts.Total(), "a second sweep finds nothing")
	require.Equal(t, before, snapshot(t, pool))
}

// snapshot is every swept table as text, to compare two states.
func snapshot(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT i::text FROM inbox_events i ORDER BY event_id`,
		`SELECT o::text FROM outbox_messages o ORDER BY id`,
		`SELECT b::text FROM booking_intents b ORDER BY intent_id`,
		`SELECT d::text FROM dedup_decisions d ORDER BY idempotency_key`,
	} {
		rows, err := pool.Query(context.Background(), q)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		out = append(out, got...)
	}
	return out
}

// TestSweepDeletesOnlyIntentsOfPastSlots: an intent goes once its slot
// has passed and it was closed longer than the retention ago, or its
// slot is longer ago than that; an intent whose slot is ahead stays,
// however old or closed. A decision goes with its intent once older than
// the retention, unless its review case is still open.
func TestSweepDeletesOnlyIntentsOfPastSlots(t *testing.T) {
	pool := testsupport.Database(t)
	day := 24 * time.Hour
	never := time.Time{}
	cases := []struct {
		id            string
		slot, closed  time.Time
		created       time.Time
		intentDeleted bool
	}{
		{"closed-long-ago", now.Add(-40 * day), now.Add(-35 * day), now.Add(-41 * day), true},
		{"closed-long-ago-slot-recent", now.Add(-3 * day), now.Add(-35 * day), now.Add(-41 * day), true},
		{"closed-recently", now.Add(-10 * day), now.Add(-2 * day), now.Add(-41 * day), false},
		{"booked-long-ago", now.Add(-31 * day), never, now.Add(-45 * day), true},
		{"booked-recently", now.Add(-2 * day), never, now.Add(-45 * day), false},
		{"open-future", now.Add(20 * day), never, now.Add(-60 * day), false},
		{"closed-future", now.Add(20 * day), now.Add(-40 * day), now.Add(-60 * day), false},
	}
	for _, c := range cases {
		var closed *time.Time
		if !c.closed.IsZero() {
			closed = &c.closed
		}
		exec(t, pool, `INSERT INTO booking_intents (tenant_id, intent_id, customer, service, slot_start, channel, workflow_id, created_at, closed_at)
			VALUES ('demo', $1, $2, 'tire-change', $3, 'whatsapp', 'appointment:demo:'||$1, $4, $5)`, c.id, phone, c.slot, c.created, closed)
		exec(t, pool, `INSERT INTO dedup_decisions (idempotency_key, tenant_id, decision, intent_id, workflow_id, channel_pair, created_at)
			VALUES ('key-'||$1, 'demo', 'new', $1, 'appointment:demo:'||$1, 'whatsapp', $2)`, c.id, c.created)
	}
	// A review decision has no intent row of its own: it stays while its
	// case waits for a person, and goes once the case is resolved.
	exec(t, pool, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, status, idempotency_key) VALUES ('case-open', 'demo', 'w', 'duplicate', 'open', 'k-open')`)
	exec(t, pool, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, status, resolution, idempotency_key, resolved_at)
		VALUES ('case-done', 'demo', 'w', 'duplicate', 'resolved', 'separate', 'k-done', now())`)
	for _, c := range []struct{ key, caseID string }{{"key-review-open", "case-open"}, {"key-review-done", "case-done"}} {
		exec(t, pool, `INSERT INTO dedup_decisions (idempotency_key, tenant_id, decision, intent_id, workflow_id, review_case, channel_pair, created_at)
			VALUES ($1, 'demo', 'review', 'gone', 'appointment:demo:gone', $2, 'voice+whatsapp', $3)`, c.key, c.caseID, now.Add(-40*day))
	}

	counts, _, err := sweeper(pool, 0).Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, counts[retention.TableIntents])
	require.Equal(t, 4, counts[retention.TableDecisions], "the three deleted intents' and the resolved review's")

	for _, c := range cases {
		require.Equal(t, !c.intentDeleted, exists(t, pool, `SELECT 1 FROM booking_intents WHERE intent_id = $1`, c.id), "intent %s", c.id)
		require.Equal(t, !c.intentDeleted, exists(t, pool, `SELECT 1 FROM dedup_decisions WHERE idempotency_key = 'key-'||$1`, c.id), "decision %s", c.id)
	}
	require.True(t, exists(t, pool, `SELECT 1 FROM dedup_decisions WHERE idempotency_key = 'key-review-open'`))
	require.False(t, exists(t, pool, `SELECT 1 FROM dedup_decisions WHERE idempotency_key = 'key-review-done'`))

	before := snapshot(t, pool)
	counts, _, err = sweeper(pool, 0).Sweep(context.Background())
	require.NoError(t, err)
	require.Zero(t, counts.Total(), "a second sweep finds nothing")
	require.Equal(t, before, snapshot(t, pool))
}

func exists(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) bool {
	t.Helper()
	var ok bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT EXISTS (`+sql+`)`, args...).Scan(&ok))
	return ok
}

// TestSweepDrainsMoreRowsThanOneBatch: a backlog larger than a batch is
// redacted completely, in several statements, in one sweep.
func TestSweepDrainsMoreRowsThanOneBatch(t *testing.T) {
	pool := testsupport.Database(t)
	const n, batch = 23, 5
	for i := range n {
		inbox(t, pool, fmt.Sprintf("SM%03d", i), "delivered", keep+time.Duration(i+1)*time.Minute)
		outboxMsg(t, pool, fmt.Sprintf("msg_%03d", i), "delivered", keep+time.Duration(i+1)*time.Minute)
	}
	// A relay call's last sentence (a digest) goes with the inbox; a call
	// still going on keeps its own.
	exec(t, pool, `INSERT INTO voice_relay_turns (call_sid, turn, prompt, updated_at) VALUES ('CAold', 3, '\x00', $1), ('CAnow', 1, '\x01', now())`,
		time.Now().Add(-keep-time.Hour))
	s := sweeper(pool, batch)
	counts, _, err := s.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Counts{retention.TableInbox: n, retention.TableOutbox: n, retention.TableIntents: 0, retention.TableDecisions: 0,
		retention.TableConsent: 0, retention.TableRelay: 1}, counts)
	require.False(t, exists(t, pool, `SELECT 1 FROM voice_relay_turns WHERE call_sid = 'CAold'`))
	require.True(t, exists(t, pool, `SELECT 1 FROM voice_relay_turns WHERE call_sid = 'CAnow'`))
	require.False(t, exists(t, pool, `SELECT 1 FROM inbox_events WHERE redacted_at IS NULL`))
	require.False(t, exists(t, pool, `SELECT 1 FROM outbox_messages WHERE redacted_at IS NULL OR body <> ''`))
	require.Equal(t, float64(n), testutil.ToFloat64(s.Metrics.Redacted(retention.TableInbox)))
}

// TestSweepSkipsWhileAnotherWorkerSweeps: of several workers, the one
// holding the sweep's lock sweeps; another does nothing that round.
func TestSweepSkipsWhileAnotherWorkerSweeps(t *testing.T) {
	pool := testsupport.Database(t)
	inbox(t, pool, "SMold", "delivered", keep+time.Hour)
	ctx := context.Background()
	other, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer other.Release()
	var got bool
	require.NoError(t, other.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, retention.LockKey).Scan(&got))
	require.True(t, got)

	counts, ran, err := sweeper(pool, 0).Sweep(ctx)
	require.NoError(t, err)
	require.False(t, ran)
	require.Zero(t, counts.Total())
	require.False(t, readInbox(t, pool, "SMold").Redacted)

	_, err = other.Exec(ctx, `SELECT pg_advisory_unlock($1)`, retention.LockKey)
	require.NoError(t, err)
	_, ran, err = sweeper(pool, 0).Sweep(ctx)
	require.NoError(t, err)
	require.True(t, ran)
	require.True(t, readInbox(t, pool, "SMold").Redacted)
}

// TestSweepRefusesNoRetention: a zero retention would redact everything
// at once; the sweep refuses it.
func TestSweepRefusesNoRetention(t *testing.T) {
	s := &retention.Sweeper{Pool: testsupport.Database(t)}
	_, _, err := s.Sweep(context.Background())
	require.ErrorIs(t, err, retention.ErrNoRetention)
}

// consentRow records a consent change of customer key, made age ago.
func consentRow(t *testing.T, pool *pgxpool.Pool, key, event, action string, age time.Duration) {
	exec(t, pool, `INSERT INTO consent_events (tenant_id, customer_key, action, channel, event_id, at)
		VALUES ('demo', $1, $2, 'whatsapp', $3, $4)`, key, action, event, now.Add(-age))
}

// TestSweepKeepsAStandingStop: a STOP that still holds is kept however
// old; what a later change superseded goes once older than the retention,
// and so does an old START with nothing before it (no row means
// subscribed, as START does). No customer's state changes.
func TestSweepKeepsAStandingStop(t *testing.T) {
	t.Parallel()
	pool := testsupport.Database(t)
	old, young := keep+time.Hour, time.Hour
	consentRow(t, pool, "standing", "SM1", "opt_out", old+time.Hour)
	consentRow(t, pool, "restarted", "SM2", "opt_out", old+time.Hour)
	consentRow(t, pool, "restarted", "SM3", "opt_in", old)
	consentRow(t, pool, "stopped-again", "SM4", "opt_out", old+time.Hour)
	consentRow(t, pool, "stopped-again", "SM5", "opt_in", old)
	consentRow(t, pool, "stopped-again", "SM6", "opt_out", young)
	consentRow(t, pool, "recent", "SM7", "opt_out", young)
	consentRow(t, pool, "recent", "SM8", "opt_in", young)
	state := func() map[string]string {
		rows, err := pool.Query(context.Background(), `SELECT DISTINCT ON (customer_key) customer_key, action FROM consent_events ORDER BY customer_key, id DESC`)
		require.NoError(t, err)
		out := map[string]string{}
		for rows.Next() {
			var k, a string
			require.NoError(t, rows.Scan(&k, &a))
			out[k] = a
		}
		require.NoError(t, rows.Err())
		return out
	}
	optedOut := func(m map[string]string) []string {
		var out []string
		for k, a := range m {
			if a == "opt_out" {
				out = append(out, k)
			}
		}
		return out
	}
	before := optedOut(state())

	counts, ran, err := sweeper(pool, 1).Sweep(context.Background()) // a batch of one: no order of deletes may flip a state
	require.NoError(t, err)
	require.True(t, ran)
	require.Equal(t, 4, counts[retention.TableConsent], "SM2, SM3, SM4 and SM5")
	rows, err := pool.Query(context.Background(), `SELECT event_id FROM consent_events ORDER BY id`)
	require.NoError(t, err)
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"SM1", "SM6", "SM7", "SM8"}, left)
	require.ElementsMatch(t, before, optedOut(state()), "the same customers opted out")
}
