package dedup

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Booked is an intent of a customer whose appointment has not ended
// without a booking: still under way, or booked.
type Booked struct {
	IntentID   string    `json:"intent_id"`
	Service    string    `json:"service"`
	SlotStart  time.Time `json:"slot_start"`
	WorkflowID string    `json:"workflow_id"`
	// Channel is where the wish that started the booking came from;
	// CreatedAt when its intent was recorded.
	Channel   string    `json:"channel,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// ConversationChannels are the channels whose wishes go through the
// customer's conversation, one after another in the order they came in
// (the agent tools and the API start bookings beside it).
var ConversationChannels = []string{"whatsapp", "voice", "sms"}

// StartedAfter reports whether b was started beside the conversation (by
// an agent or the API) after at: a wish the customer sent at at cannot
// mean it. A booking of the conversation's own was started by one of its
// earlier wishes, whenever its intent was recorded.
func (b Booked) StartedAfter(at time.Time) bool {
	return !at.IsZero() && !b.CreatedAt.IsZero() && b.CreatedAt.After(at) && !slices.Contains(ConversationChannels, b.Channel)
}

// Upcoming lists the customer's open intents whose slot is still ahead,
// earliest slot first: the bookings a cancellation wish can mean. Closed
// intents (their appointment ended without a booking) are not listed.
// Retention does not apply: a booking made weeks ago for next month can
// still be cancelled.
func (s *Store) Upcoming(ctx context.Context, tenant, customer string) ([]Booked, error) {
	return s.Since(ctx, tenant, customer, s.now())
}

// Since lists the customer's open intents whose (first) slot is after
// since, earliest first. A booking moved later keeps its intent's first
// slot, so a caller that wants it after that slot has passed asks from
// further back and reads the current slot from the booking.
func (s *Store) Since(ctx context.Context, tenant, customer string, since time.Time) ([]Booked, error) {
	rows, err := s.Pool.Query(ctx, `SELECT intent_id, service, slot_start, workflow_id, channel, created_at FROM booking_intents
		WHERE tenant_id = $1 AND customer = $2 AND closed_at IS NULL AND slot_start > $3
		ORDER BY slot_start, intent_id`, tenant, customer, since)
	if err != nil {
		return nil, fmt.Errorf("dedup upcoming intents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Booked, error) {
		var b Booked
		err := r.Scan(&b.IntentID, &b.Service, &b.SlotStart, &b.WorkflowID, &b.Channel, &b.CreatedAt)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("dedup upcoming intents: %w", err)
	}
	return out, nil
}
