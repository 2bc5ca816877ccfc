package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Target is what Store.Target reads of the booking an intent points to.
type Target struct {
	// Over: nothing is booked or will be under this intent any more (its
	// appointment ended without a booking; its booking was cancelled,
	// completed or a no-show). The same wish again is a new booking.
	Over bool
	// Ending: the booking is being cancelled (its cancel waits for the
	// calendar or a refund). Not over yet, but nothing will stand under
	// this intent once it is: a wish that merges here is told so, never
	// "bereits in Bearbeitung" over a booking that is ending.
	Ending bool
	// Slot is the booking's current slot, which a move changes; zero: not
	// known (yet), the intent's own slot stands.
	Slot time.Time
}

// movedPrefix names an intent row whose booking was moved away from the
// slot its intent ID hashes: it keeps pointing at the booking (which a
// cancellation wish must still find, under its current slot) but no
// longer merges the wish for its first slot.
const movedPrefix = "moved:"

// maxTargets bounds the customer's intents one decision reads the
// bookings of.
const maxTargets = 10

// openIntent is an open booking_intents row a wish may merge into.
type openIntent struct {
	intentID, workflowID, channel string
	slot                          time.Time
}

// merge looks for the open intent that covers in now and, when there is
// one, merges in into it. Without Target that is the row of in's intent
// ID. With it, each of the customer's open intents of the service is read
// first: one that is over is closed, one whose booking moved follows its
// current slot, and a live booking at in's slot takes the wish.
func (s *Store) merge(ctx context.Context, tx pgx.Tx, in Intent, now time.Time) (Decision, bool, error) {
	rows, err := s.openIntents(ctx, tx, in, now)
	if err != nil {
		return Decision{}, false, err
	}
	for _, r := range rows {
		covers, ending, err := s.covers(ctx, tx, in, r, now)
		if err != nil {
			return Decision{}, false, err
		}
		if !covers {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE booking_intents SET events = array_append(events, $3) WHERE tenant_id = $1 AND intent_id = $2 AND NOT ($3 = ANY(events))`,
			in.Tenant, r.intentID, in.EventID); err != nil {
			return Decision{}, false, fmt.Errorf("record merged event: %w", err)
		}
		return Decision{Kind: Merge, IntentID: r.intentID, WorkflowID: r.workflowID, ChannelPair: r.channel + "+" + in.Channel, Ending: ending}, true, nil
	}
	return Decision{}, false, nil
}

// openIntents are the intents in may merge into, within retention: its
// own first (under its keyed ID, then its legacy one); with Target also
// the customer's others of the service.
func (s *Store) openIntents(ctx context.Context, tx pgx.Tx, in Intent, now time.Time) ([]openIntent, error) {
	rows, err := tx.Query(ctx, `SELECT intent_id, workflow_id, channel, slot_start FROM booking_intents
		WHERE tenant_id = $1 AND created_at > $3 AND closed_at IS NULL
		  AND (intent_id = $2 OR intent_id = $8 OR ($4 AND customer = $5 AND service = $6))
		ORDER BY intent_id = $2 DESC, intent_id = $8 DESC, created_at DESC LIMIT $7`,
		in.Tenant, in.IntentID, now.Add(-s.Retention), s.Target != nil, in.Customer, in.Service, maxTargets, in.LegacyIntentID)
	if err != nil {
		return nil, fmt.Errorf("read open intents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (openIntent, error) {
		var o openIntent
		err := r.Scan(&o.intentID, &o.workflowID, &o.channel, &o.slot)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("read open intents: %w", err)
	}
	return out, nil
}

// covers reports whether the open intent r is the booking in asks for
// now, and whether that booking is ending (Target.Ending), and brings r up
// to date with its booking on the way: closed when the booking is over,
// following the booking's slot when it moved. An error reading the booking
// is not "live": the decision fails and is retried.
func (s *Store) covers(ctx context.Context, tx pgx.Tx, in Intent, r openIntent, now time.Time) (covers, ending bool, err error) {
	own := in.names(r.intentID)
	if s.Target == nil {
		return own, false, nil
	}
	t, err := s.Target(ctx, r.workflowID)
	if err != nil {
		return false, false, fmt.Errorf("read booking %s: %w", r.workflowID, err)
	}
	if t.Over {
		_, err := tx.Exec(ctx, `UPDATE booking_intents SET closed_at = $3 WHERE tenant_id = $1 AND intent_id = $2 AND closed_at IS NULL`,
			in.Tenant, r.intentID, now)
		if err != nil {
			return false, false, fmt.Errorf("close intent of %s: %w", r.workflowID, err)
		}
		return false, false, nil
	}
	moved := strings.HasPrefix(r.intentID, movedPrefix)
	if !t.Slot.IsZero() && !t.Slot.Equal(r.slot) {
		if err := s.follow(ctx, tx, in.Tenant, r, t.Slot); err != nil {
			return false, false, err
		}
		moved = true
	}
	if t.Slot.IsZero() || !moved {
		return own, t.Ending, nil
	}
	return t.Slot.Equal(in.SlotStart), t.Ending, nil
}

// ending reads whether the booking a merge decision taken earlier points
// to is ending now: a decision asked for again is answered as it is now,
// not as it was.
func (s *Store) ending(ctx context.Context, d Decision) (bool, error) {
	if d.Kind != Merge || s.Target == nil {
		return false, nil
	}
	t, err := s.Target(ctx, d.WorkflowID)
	if err != nil {
		return false, fmt.Errorf("read booking %s: %w", d.WorkflowID, err)
	}
	return t.Ending, nil
}

// follow re-keys the intent row r of a moved booking to its moved name
// and current slot, so the wish for its first slot is a new one while a
// wish for the new slot, a review and a cancellation wish find it.
func (s *Store) follow(ctx context.Context, tx pgx.Tx, tenant string, r openIntent, slot time.Time) error {
	sum := sha256.Sum256([]byte(r.workflowID))
	moved := movedPrefix + hex.EncodeToString(sum[:12])
	_, err := tx.Exec(ctx, `UPDATE booking_intents SET intent_id = $3, slot_start = $4 WHERE tenant_id = $1 AND intent_id = $2`,
		tenant, r.intentID, moved, slot)
	if err != nil {
		return fmt.Errorf("follow the move of %s: %w", r.workflowID, err)
	}
	return nil
}

// maxGenerations bounds how many bookings one standing key follows.
const maxGenerations = 50

// Current is the key a standing operation for slot decides under now. A
// caller whose key names the wish rather than one request (the agent's
// call without an operation ID) replays one decision for every repeat;
// once the booking that decision started no longer holds slot (Target:
// it is over, or it was moved to another slot), the same wish is a new
// business operation and needs a key of its own. That key is derived
// from the booking before it, so parallel and repeated calls after the
// cancel or move converge on one new decision, and the chain stays
// walkable. Without Target, key stands.
func (s *Store) Current(ctx context.Context, key string, slot time.Time) (string, error) {
	if s.Target == nil {
		return key, nil
	}
	base := key
	for range maxGenerations {
		var workflowID string
		err := s.Pool.QueryRow(ctx, `SELECT workflow_id FROM dedup_decisions WHERE idempotency_key = $1`, key).Scan(&workflowID)
		if errors.Is(err, pgx.ErrNoRows) {
			return key, nil
		}
		if err != nil {
			return "", fmt.Errorf("dedup current key: %w", err)
		}
		t, err := s.Target(ctx, workflowID)
		if err != nil {
			return "", fmt.Errorf("dedup current key: read booking %s: %w", workflowID, err)
		}
		if !t.Over && !movedAway(t, slot) {
			return key, nil
		}
		sum := sha256.Sum256([]byte(workflowID))
		key = base + "/after:" + hex.EncodeToString(sum[:8])
	}
	return "", fmt.Errorf("dedup current key: %s has been booked and ended %d times; ask a person", base, maxGenerations)
}

// movedAway reports whether the live booking t was moved off slot: a
// booking moved back onto it holds it again, and one whose slot is not
// known yet holds its intent's own.
func movedAway(t Target, slot time.Time) bool {
	return !t.Slot.IsZero() && !t.Slot.Equal(slot)
}
