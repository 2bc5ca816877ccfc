// Package outbox is how messages leave bookonce: a message is first
// reserved as a row unique per booking and kind, then sent, then marked
// with the provider's ID. Twilio has no idempotency keys for messages, so
// the reservation is what makes a confirmation exist once.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
	"github.com/bookonce/bookonce/internal/telemetry"
)

// Message is one outbound message.
type Message struct {
	ID         string `json:"id"`
	Tenant     string `json:"tenant"`
	Reference  string `json:"reference"`
	Kind       string `json:"kind"`
	Channel    string `json:"channel"`
	Recipient  string `json:"recipient"`
	Body       string `json:"body"`
	State      string `json:"state"`
	ProviderID string `json:"provider_id,omitempty"`
	// AcceptedAt is when the webhook behind the message's booking was
	// accepted (zero: none): the relay records message_sent from it.
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
	// SendBy is the moment after which the message must not go out (the
	// slot's start, a link's expiry; zero: none): a row the relay reaches
	// later is recorded 'expired', never sent late.
	SendBy time.Time `json:"send_by,omitzero"`
	// Template names the message's approved WhatsApp template and Fields
	// fill it (window.go): a message that may leave more than 24 hours
	// after the customer last wrote goes as that template then. Empty: a
	// reply, always sent as Body.
	Template string            `json:"template,omitempty"`
	Fields   map[string]string `json:"-"`
}

// Store keeps the outbox in PostgreSQL.
type Store struct {
	Pool *pgxpool.Pool
	// Sealer encrypts recipients and texts at rest: the payload key set.
	// Nil stores them in clear, as without BOOKONCE_PAYLOAD_KEYS; rows
	// sealed earlier then fail to open with payloadcrypt.ErrNoKeys.
	Sealer *payloadcrypt.Codec
}

// ErrConflict means another message of the same kind exists for the
// booking with a different body: never silently replaced.
var ErrConflict = errors.New("outbox: a different message of this kind exists for the booking")

// Reserve inserts m as pending under key, or returns the existing row for
// the same booking and kind. A retry, a reset workflow or a second worker
// therefore always meets the first reservation.
func (s *Store) Reserve(ctx context.Context, key string, m Message) (Message, error) {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	id := "msg_" + hex.EncodeToString(b)
	cols, err := s.seal(id, m.Recipient, m.Body, m.Fields)
	if err != nil {
		return Message{}, err
	}
	tag, err := s.Pool.Exec(ctx, `INSERT INTO outbox_messages (id, tenant_id, reference, kind, channel, recipient, body, sealed, idempotency_key, accepted_at, send_by,
			template, fields)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, nullif($12, ''), $13) ON CONFLICT (tenant_id, reference, kind) DO NOTHING`,
		id, m.Tenant, m.Reference, m.Kind, m.Channel, cols.recipient, cols.body, cols.sealed, key, nullTime(m.AcceptedAt), nullTime(m.SendBy),
		m.Template, cols.fields)
	if err != nil {
		return Message{}, fmt.Errorf("reserve outbox message: %w", err)
	}
	var got Message
	var redacted bool
	var sealed, fields []byte
	err = s.Pool.QueryRow(ctx, `SELECT id, tenant_id, reference, kind, channel, recipient, body, fields, sealed, state, coalesce(provider_id, ''), redacted_at IS NOT NULL
		FROM outbox_messages WHERE tenant_id = $1 AND reference = $2 AND kind = $3`, m.Tenant, m.Reference, m.Kind).
		Scan(&got.ID, &got.Tenant, &got.Reference, &got.Kind, &got.Channel, &got.Recipient, &got.Body, &fields, &sealed, &got.State, &got.ProviderID, &redacted)
	if errors.Is(err, pgx.ErrNoRows) {
		return Message{}, fmt.Errorf("reserve outbox message: row vanished")
	}
	if err != nil {
		return Message{}, fmt.Errorf("reserve outbox message: %w", err)
	}
	if got.Recipient, got.Body, got.Fields, err = s.Open(got.ID, got.Recipient, got.Body, fields, sealed); err != nil {
		return Message{}, fmt.Errorf("reserve outbox message: %w", err)
	}
	// A row the retention sweep redacted has lost its text: it is the
	// message reserved then (one per booking and kind), not a different one.
	if !redacted && (got.Recipient != m.Recipient || got.Body != m.Body) {
		return got, ErrConflict
	}
	if tag.RowsAffected() == 0 {
		// The same message again (a retried or re-executed activity, a reset
		// workflow): without the reservation it would go out twice.
		telemetry.DuplicatesBlocked.WithLabelValues(telemetry.LayerOutbox, m.Tenant, RouteReserve).Inc()
	}
	return got, nil
}

// Routes of bookonce_duplicates_blocked_total{layer="outbox"}: where the
// second message was stopped.
const (
	// RouteReserve: a second reservation of the same message met the first.
	RouteReserve = "reserve"
	// RouteReconcile: a send with an unknown outcome was found at the
	// provider, so the relay recorded it instead of sending it again.
	RouteReconcile = "reconcile"
)

// nullTime is the column value of an optional time: NULL for none.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// StateWithdrawn is the state of a message withdrawn before any attempt
// to send it (Withdraw).
const StateWithdrawn = "withdrawn"

// Withdraw takes back the booking's message of kind if no relay has tried
// to send it yet, and reports whether it did: a row a relay has claimed
// or attempted is on its way and stays as it is (its claim holds the row
// lock until the attempt is recorded, and the condition is re-read after
// it). Withdrawing again reports true (a retried call meets its own
// withdrawal); a message that was never reserved reports false.
func (s *Store) Withdraw(ctx context.Context, tenant, reference, kind string) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE outbox_messages SET state = $4, last_error = 'withdrawn before sending'
		WHERE tenant_id = $1 AND reference = $2 AND kind = $3 AND state = 'pending' AND attempted_at IS NULL
		  AND (claimed_until IS NULL OR claimed_until < now())`, tenant, reference, kind, StateWithdrawn)
	if err != nil {
		return false, fmt.Errorf("withdraw outbox message: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var state string
	err = s.Pool.QueryRow(ctx, `SELECT state FROM outbox_messages WHERE tenant_id = $1 AND reference = $2 AND kind = $3`, tenant, reference, kind).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("withdraw outbox message: %w", err)
	}
	return state == StateWithdrawn, nil
}
