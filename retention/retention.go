// Package retention redacts personal data (phone numbers, message texts)
// that is older than BOOKONCE_RETENTION, and keeps what replay protection
// and open bookings still need: an inbox row keeps its event ID and state,
// so a redelivered webhook is still dropped as a duplicate; an outbox row
// keeps its state; an intent whose slot is ahead is never touched.
//
// Every statement handles at most one batch of rows, picked with FOR
// UPDATE SKIP LOCKED, so a large backlog drains in short transactions and
// never holds long locks; every statement is idempotent (a redacted row
// leaves the set it selects from), so several workers may sweep at once.
// An advisory lock makes only one of them do the work.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Table names a place the sweep redacts (the label of the counter).
type Table string

// Tables the sweep redacts, in the order it sweeps them (intents before
// the decisions that point at them).
const (
	TableInbox     Table = "inbox_events"
	TableOutbox    Table = "outbox_messages"
	TableIntents   Table = "booking_intents"
	TableDecisions Table = "dedup_decisions"
	TableConsent   Table = "consent_events"
	TableRelay     Table = "voice_relay_turns"
)

// DefaultBatch is how many rows one statement changes at most.
const DefaultBatch = 500

// LockKey is the session advisory lock of the sweep: of several workers,
// one sweeps and the others skip that round.
const LockKey int64 = 0x626f6f6b72657400 // "bookret\0"

// step is one table's batched statement, with the named arguments
// @cutoff (now minus the retention), @now and @batch (the most rows).
type step struct {
	table Table
	sql   string
}

// steps are the statements of one sweep. Each selects rows not yet
// redacted (or still present), so running it again changes nothing.
var steps = []step{
	// Inbox: the key (provider, event_id), kind, channel, state and times
	// stay; the sender's number and the payload (message text, caller ID)
	// go, sealed or not, and so does the customer key that opened
	// WhatsApp's window. Pending rows are still to be relayed and unmatched ones wait
	// for a person on the ops page (payment events: no personal data).
	{TableInbox, `UPDATE inbox_events SET customer = '', payload = '{}'::jsonb, sealed = NULL, customer_key = NULL, redacted_at = @now
		WHERE (provider, event_id) IN (SELECT provider, event_id FROM inbox_events
			WHERE redacted_at IS NULL AND state = 'delivered' AND received_at < @cutoff
			ORDER BY received_at LIMIT @batch FOR UPDATE SKIP LOCKED)`},
	// Outbox: a message in a final state keeps its state and provider ID;
	// recipient, text and template fields (sealed or not) and the
	// provider's error (which may quote the number) go. Pending and review
	// rows are still needed.
	{TableOutbox, `UPDATE outbox_messages SET recipient = '', body = '', fields = NULL, sealed = NULL, last_error = NULL, redacted_at = @now
		WHERE id IN (SELECT id FROM outbox_messages
			WHERE redacted_at IS NULL AND state IN ('sent', 'delivered', 'failed', 'suppressed') AND updated_at < @cutoff
			ORDER BY updated_at LIMIT @batch FOR UPDATE SKIP LOCKED)`},
	// Intents whose slot has passed: closed ones (no booking) once closed
	// longer than the retention, booked ones once their slot is longer
	// ago than that. No wish can meet them again (the intent ID contains
	// the slot), and cancelling needs a slot ahead. An intent whose slot
	// is ahead is never touched.
	{TableIntents, `DELETE FROM booking_intents WHERE (tenant_id, intent_id) IN (
		SELECT tenant_id, intent_id FROM booking_intents
			WHERE slot_start < @now AND (closed_at < @cutoff OR slot_start < @cutoff)
			ORDER BY slot_start LIMIT @batch FOR UPDATE SKIP LOCKED)`},
	// Decisions are what a retried dedup activity gets back: they go once
	// older than the retention and their intent is gone, unless their
	// review case still waits for a person.
	{TableDecisions, `DELETE FROM dedup_decisions WHERE idempotency_key IN (
		SELECT d.idempotency_key FROM dedup_decisions d
			WHERE d.created_at < @cutoff
			  AND NOT EXISTS (SELECT 1 FROM booking_intents b WHERE b.tenant_id = d.tenant_id AND b.intent_id = d.intent_id)
			  AND NOT EXISTS (SELECT 1 FROM review_cases r WHERE r.id = d.review_case AND r.status = 'open')
			ORDER BY d.created_at LIMIT @batch FOR UPDATE OF d SKIP LOCKED)`},
	// Consent: a customer's standing STOP is kept, however old: it is
	// what holds their reminders back, and its proof. What a later change
	// superseded goes once older than the retention, and so does a START
	// with nothing before it left (no row means subscribed, as START
	// does). A START goes only after the rows before it, so no sweep ever
	// leaves an old STOP standing alone.
	{TableConsent, `DELETE FROM consent_events WHERE id IN (
		SELECT e.id FROM consent_events e
			WHERE e.at < @cutoff AND (
				EXISTS (SELECT 1 FROM consent_events l WHERE l.tenant_id = e.tenant_id AND l.customer_key = e.customer_key AND l.id > e.id)
				OR (e.action = 'opt_in' AND NOT EXISTS (SELECT 1 FROM consent_events b
					WHERE b.tenant_id = e.tenant_id AND b.customer_key = e.customer_key AND b.id < e.id)))
			ORDER BY e.id LIMIT @batch FOR UPDATE OF e SKIP LOCKED)`},
	// Relay turns: the digest of a call's last sentence, needed only while
	// the call lasts.
	{TableRelay, `DELETE FROM voice_relay_turns WHERE call_sid IN (
		SELECT call_sid FROM voice_relay_turns WHERE updated_at < @cutoff
			ORDER BY updated_at LIMIT @batch FOR UPDATE SKIP LOCKED)`},
}

// Sweeper redacts what is older than Retention.
type Sweeper struct {
	Pool *pgxpool.Pool
	// Retention is BOOKONCE_RETENTION.
	Retention time.Duration
	// Batch is the most rows one statement changes (0: DefaultBatch).
	Batch   int
	Metrics *Metrics
	Log     *slog.Logger
	Now     func() time.Time
}

// Counts is how many rows a sweep redacted or deleted, by table.
type Counts map[Table]int

// Total is the sum over all tables.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// ErrNoRetention refuses a sweep without a positive retention, which
// would redact everything at once.
var ErrNoRetention = errors.New("retention: the retention must be positive")

// Sweep redacts every row older than the retention, batch by batch, and
// answers what it changed. ran is false when another process holds the
// sweep's lock (it is sweeping; nothing was done here).
func (s *Sweeper) Sweep(ctx context.Context) (counts Counts, ran bool, err error) {
	if s.Retention <= 0 {
		return nil, false, ErrNoRetention
	}
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("retention: %w", err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, LockKey).Scan(&ran); err != nil || !ran {
		return nil, false, err
	}
	defer func() {
		// A failed unlock leaves the lock with the session: drop the
		// connection, so the next sweep (anywhere) can take it.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, LockKey); uerr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	now := s.now()
	cutoff := now.Add(-s.Retention)
	counts = Counts{}
	for _, st := range steps {
		n, err := s.drain(ctx, conn, st, cutoff, now)
		counts[st.table] = n
		if err != nil {
			return counts, true, fmt.Errorf("retention: %s: %w", st.table, err)
		}
	}
	return counts, true, nil
}

// drain runs st until a batch comes back short.
func (s *Sweeper) drain(ctx context.Context, conn *pgxpool.Conn, st step, cutoff, now time.Time) (int, error) {
	batch, total := s.batch(), 0
	for {
		tag, err := conn.Exec(ctx, st.sql, pgx.NamedArgs{"cutoff": cutoff, "now": now, "batch": batch})
		if err != nil {
			return total, err
		}
		n := int(tag.RowsAffected())
		total += n
		s.Metrics.add(st.table, n)
		if n < batch {
			return total, nil
		}
	}
}

func (s *Sweeper) batch() int {
	if s.Batch > 0 {
		return s.Batch
	}
	return DefaultBatch
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sweeper) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Run sweeps at once and then every interval until ctx ends. It logs
// counts only, never what was redacted; a failed sweep is retried at the
// next tick (the data only stays longer meanwhile).
func (s *Sweeper) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sweeper) once(ctx context.Context) {
	counts, ran, err := s.Sweep(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log().Warn("retention sweep failed; retried at the next interval", "err", err, "retention", s.Retention)
	case ran && counts.Total() > 0:
		s.log().Info("retention sweep redacted personal data", "retention", s.Retention,
			"inbox_events", counts[TableInbox], "outbox_messages", counts[TableOutbox],
			"booking_intents", counts[TableIntents], "dedup_decisions", counts[TableDecisions], "consent_events", counts[TableConsent], "voice_relay_turns", counts[TableRelay])
	}
}
