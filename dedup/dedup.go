// Package dedup decides, across channels, whether a booking intent is new,
// the same as one already under way (merge), or close enough to another of
// the same customer that a person must decide (review). Same intent
// merges; similar but different intents go to review; nothing is silently
// dropped, because a second car is a real second booking.
package dedup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Kind is a dedup decision.
type Kind string

// Decisions.
const (
	New    Kind = "new"
	Merge  Kind = "merge"
	Review Kind = "review"
	// Ask: a close intent exists and the caller asked to be told instead
	// of a review case being opened (Intent.Ask); nothing was recorded, so
	// the wish may come again confirmed (Separate) or not at all.
	Ask Kind = "ask"
)

// Intent is a canonical booking intent from one channel event.
type Intent struct {
	Tenant     string    `json:"tenant"`
	IntentID   string    `json:"intent_id"`
	Customer   string    `json:"customer"`
	Service    string    `json:"service"`
	SlotStart  time.Time `json:"slot_start"`
	Channel    string    `json:"channel"`
	EventID    string    `json:"event_id"`
	WorkflowID string    `json:"workflow_id"` // the appointment to start if new
	// LegacyIntentID is the wish's intent ID before keyed intent IDs, a
	// plain hash of the number (workflows.LegacyIntentID); "" for none.
	// A booking started under it still takes the same wish, after the ID
	// itself is tried. Rows older than Retention merge nothing, so the
	// field can go once Retention (IDEMPOTENCY_TTL) has passed since every
	// worker and gateway derives keyed IDs.
	LegacyIntentID string `json:"legacy_intent_id,omitempty"`
	// ConversationID is the customer's conversation workflow; review cases
	// resolve back to it.
	ConversationID string `json:"conversation_id"`
	// Separate forces a new booking: a reviewer decided it is not a duplicate.
	Separate bool `json:"separate,omitempty"`
	// Ask answers a potential duplicate with the decision Ask instead of a
	// review case: the caller (an AI agent's tool call) asks its human
	// itself, and there is no conversation a reviewer's decision could
	// resume.
	Ask bool `json:"ask,omitempty"`
}

// names reports whether id is in's intent ID, under its keyed or its
// legacy form: the row of the same wish either way.
func (in Intent) names(id string) bool {
	return id == in.IntentID || in.LegacyIntentID != "" && id == in.LegacyIntentID
}

// Decision is what Decide found.
type Decision struct {
	Kind        Kind   `json:"kind"`
	IntentID    string `json:"intent_id"`
	WorkflowID  string `json:"workflow_id"`
	ReviewCase  string `json:"review_case,omitempty"`
	ChannelPair string `json:"channel_pair"`
	// Conflicting is the close intent a review case compares against.
	Conflicting string `json:"conflicting,omitempty"`
	// ConflictingWorkflow, ConflictingService and ConflictingSlot describe
	// that intent's appointment (set with Ask).
	ConflictingWorkflow string    `json:"conflicting_workflow,omitempty"`
	ConflictingService  string    `json:"conflicting_service,omitempty"`
	ConflictingSlot     time.Time `json:"conflicting_slot,omitzero"`
	// Ending is set with Merge when the booking merged into is being
	// cancelled (Target.Ending): the wish will not be booked by it, and
	// the customer must be told so.
	Ending bool `json:"ending,omitempty"`
}

// Store decides in PostgreSQL.
type Store struct {
	Pool *pgxpool.Pool
	// Window is DEDUP_WINDOW: how close in time two different intents of
	// one customer must be to count as a potential duplicate.
	Window time.Duration
	// Retention is how long an intent merges repeats (the replay horizon).
	Retention time.Duration
	// Location decides "the same day".
	Location *time.Location
	Now      func() time.Time
	// Target reads the booking an intent points to (Target): a merge
	// target that is over (its appointment ended without a booking, its
	// close was lost or it was terminated; or its booking was cancelled,
	// completed or a no-show) is closed here and the wish becomes a new
	// attempt, and a booking moved to another slot no longer covers the
	// intent's slot but its new one. A merge into a booking that is over
	// would answer "bereits in Bearbeitung" and book nothing. nil: only the
	// intent's closed_at counts.
	Target func(ctx context.Context, workflowID string) (Target, error)
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Decide takes the decision for in under key, atomically: the customer's
// intents are serialised by an advisory lock, the intent row and the
// decision commit together, and a retry with the same key returns the
// decision already taken.
func (s *Store) Decide(ctx context.Context, key string, in Intent) (Decision, error) {
	var d Decision
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		d, err = s.decide(ctx, tx, key, in)
		return err
	})
	if err != nil {
		return Decision{}, fmt.Errorf("dedup decide: %w", err)
	}
	return d, nil
}

func (s *Store) decide(ctx context.Context, tx pgx.Tx, key string, in Intent) (Decision, error) {
	var d Decision
	// Lock before looking the key up: two calls with one key at once (an
	// agent's parallel tool calls) then see each other's decision instead
	// of both deciding and one failing on the key's uniqueness.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2))`, in.Tenant, in.Customer); err != nil {
		return d, err
	}
	err := tx.QueryRow(ctx, `SELECT decision, intent_id, workflow_id, coalesce(review_case, ''), channel_pair FROM dedup_decisions WHERE idempotency_key = $1`, key).
		Scan(&d.Kind, &d.IntentID, &d.WorkflowID, &d.ReviewCase, &d.ChannelPair)
	if err == nil {
		d.Ending, err = s.ending(ctx, d)
		return d, err
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return d, err
	}
	now := s.now()
	d, found, err := s.merge(ctx, tx, in, now)
	if err != nil {
		return d, err
	}
	if !found {
		if d, err = s.newOrReview(ctx, tx, key, in, now); err != nil {
			return d, err
		}
	}
	if d.Kind == Ask {
		return d, nil // nothing decided: the caller asks its human first
	}
	_, err = tx.Exec(ctx, `INSERT INTO dedup_decisions (idempotency_key, tenant_id, decision, intent_id, workflow_id, review_case, channel_pair)
		VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7)`, key, in.Tenant, string(d.Kind), d.IntentID, d.WorkflowID, d.ReviewCase, d.ChannelPair)
	return d, err
}

func (s *Store) newOrReview(ctx context.Context, tx pgx.Tx, key string, in Intent, now time.Time) (Decision, error) {
	if !in.Separate {
		close, err := s.closeIntent(ctx, tx, in, now)
		if err != nil {
			return Decision{}, err
		}
		if close != nil && in.Ask {
			return Decision{Kind: Ask, IntentID: in.IntentID, WorkflowID: in.WorkflowID, ChannelPair: close.channel + "+" + in.Channel,
				Conflicting: close.intentID, ConflictingWorkflow: close.workflowID, ConflictingService: close.service, ConflictingSlot: close.slot}, nil
		}
		if close != nil {
			caseID, err := openCase(ctx, tx, key, in, close)
			if err != nil {
				return Decision{}, err
			}
			return Decision{Kind: Review, IntentID: in.IntentID, WorkflowID: in.WorkflowID, ReviewCase: caseID,
				ChannelPair: close.channel + "+" + in.Channel, Conflicting: close.intentID}, nil
		}
	}
	// A row that is still here is closed (its appointment failed, its
	// booking was cancelled or is over), past retention, or moved to
	// another slot (it still names the first workflow ID): this is a new
	// attempt and gets its own workflow ID, since the old one is taken.
	// The suffix comes from the key, so a retry converges on one workflow.
	workflowID := in.WorkflowID
	var old int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM booking_intents WHERE tenant_id = $1 AND (intent_id = $2 OR workflow_id = $3)`,
		in.Tenant, in.IntentID, in.WorkflowID).Scan(&old); err != nil {
		return Decision{}, err
	}
	if old > 0 {
		sum := sha256.Sum256([]byte(key))
		workflowID += "-" + hex.EncodeToString(sum[:4])
	}
	_, err := tx.Exec(ctx, `INSERT INTO booking_intents (tenant_id, intent_id, customer, service, slot_start, channel, workflow_id, events, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, ARRAY[$8], $9)
		ON CONFLICT (tenant_id, intent_id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id, channel = EXCLUDED.channel,
			events = EXCLUDED.events, created_at = EXCLUDED.created_at, closed_at = NULL`,
		in.Tenant, in.IntentID, in.Customer, in.Service, in.SlotStart, in.Channel, workflowID, in.EventID, now)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Kind: New, IntentID: in.IntentID, WorkflowID: workflowID, ChannelPair: in.Channel}, nil
}

// Close marks the intent of an appointment that ended without a booking,
// so the same wish later starts a new attempt instead of merging into it.
// Closing twice, or an appointment no intent points at, changes nothing.
func (s *Store) Close(ctx context.Context, tenant, intentID, workflowID string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE booking_intents SET closed_at = $4
		WHERE tenant_id = $1 AND intent_id = $2 AND workflow_id = $3 AND closed_at IS NULL`, tenant, intentID, workflowID, s.now())
	if err != nil {
		return fmt.Errorf("dedup close intent: %w", err)
	}
	return nil
}

type closeMatch struct {
	intentID, service, channel, workflowID string
	slot                                   time.Time
}

// closeIntent finds another intent of the customer within the window with
// the same service on the same day, or the same slot with another service.
func (s *Store) closeIntent(ctx context.Context, tx pgx.Tx, in Intent, now time.Time) (*closeMatch, error) {
	rows, err := tx.Query(ctx, `SELECT intent_id, service, slot_start, channel, workflow_id FROM booking_intents
		WHERE tenant_id = $1 AND customer = $2 AND intent_id <> $3 AND intent_id <> $5 AND created_at > $4 AND closed_at IS NULL
		ORDER BY created_at DESC`,
		in.Tenant, in.Customer, in.IntentID, now.Add(-s.Window), in.LegacyIntentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	for rows.Next() {
		var m closeMatch
		if err := rows.Scan(&m.intentID, &m.service, &m.slot, &m.channel, &m.workflowID); err != nil {
			return nil, err
		}
		sameDay := m.slot.In(loc).Format(time.DateOnly) == in.SlotStart.In(loc).Format(time.DateOnly)
		if (m.service == in.Service && sameDay) || m.slot.Equal(in.SlotStart) {
			return &m, nil
		}
	}
	return nil, rows.Err()
}

func openCase(ctx context.Context, tx pgx.Tx, key string, in Intent, close *closeMatch) (string, error) {
	details, err := json.Marshal(map[string]any{
		"intent": in, "conflicting_intent": close.intentID, "conflicting_workflow": close.workflowID,
		"conflicting_service": close.service, "conflicting_slot": close.slot,
	})
	if err != nil {
		return "", err
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	id := "rc_" + hex.EncodeToString(b)
	_, err = tx.Exec(ctx, `INSERT INTO review_cases (id, tenant_id, workflow_id, reason, details, idempotency_key)
		VALUES ($1, $2, $3, 'potential_duplicate', $4, $5)`, id, in.Tenant, in.ConversationID, details, "dedup/"+key)
	return id, err
}
