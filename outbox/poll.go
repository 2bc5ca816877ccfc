package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// A message's delivery status arrives by the provider's status callback.
// Twilio posts each callback once and does not retry one the gateway
// failed to take (a restart, an outage): a message that then failed would
// stay 'sent' for ever, its failure unseen on the ops page and its SMS
// fallback never sent. So the relay asks the provider about messages
// still 'sent' a while after they were sent, and records what it answers
// as the callback would have.

// StatusReader is implemented by a Provider that can read a message's
// delivery status (twilio.Client, from Twilio's Message resource): its
// status as a callback reports it, and for a failure the provider's error
// code and what that means.
type StatusReader interface {
	MessageStatus(ctx context.Context, providerID string) (status, code, reason string, err error)
}

// DefaultStatusPoll is Sender.StatusPoll when it is zero: a callback comes
// seconds after the provider's answer, so ten minutes without one is one
// lost.
const DefaultStatusPoll = 10 * time.Minute

// statusHorizon is how long after its last change a message still 'sent'
// is asked about: a WhatsApp message can stay 'sent' (handed to WhatsApp,
// the phone off) for days, and no fallback helps after a day.
const statusHorizon = 24 * time.Hour

// maxPollsPerRun bounds the provider reads of one RunOnce.
const maxPollsPerRun = 50

func (s *Sender) statusPoll() time.Duration {
	if s.StatusPoll != 0 {
		return s.StatusPoll
	}
	return DefaultStatusPoll
}

// pollStatuses asks the provider about the messages 'sent' longer than
// StatusPoll ago (and not asked since) and records every status it
// answers. A message asked about is asked again only StatusPoll later.
func (s *Sender) pollStatuses(ctx context.Context) error {
	reader, ok := s.Provider.(StatusReader)
	if !ok || s.statusPoll() < 0 {
		return nil
	}
	now := s.now()
	// Asked at most every tenth of StatusPoll, not on every run.
	if last := s.polledAt.Load(); last != 0 && now.Sub(time.Unix(0, last)) < s.statusPoll()/10 {
		return nil
	}
	s.polledAt.Store(now.UnixNano())
	due := now.Add(-s.statusPoll())
	rows, err := s.Store.Pool.Query(ctx, `SELECT id, provider_id FROM outbox_messages
		WHERE state = 'sent' AND provider_id IS NOT NULL AND channel = ANY($1)
		  AND updated_at < $2 AND updated_at > $3 AND (status_checked_at IS NULL OR status_checked_at < $2)
		ORDER BY coalesce(status_checked_at, updated_at) LIMIT $4`, relayChannels, due, now.Add(-statusHorizon), maxPollsPerRun)
	if err != nil {
		return fmt.Errorf("status poll: %w", err)
	}
	type sent struct{ id, providerID string }
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sent, error) {
		var m sent
		return m, r.Scan(&m.id, &m.providerID)
	})
	if err != nil {
		return fmt.Errorf("status poll: %w", err)
	}
	var errs []error
	for _, m := range found {
		errs = append(errs, s.pollOne(ctx, reader, m.id, m.providerID, now))
	}
	return errors.Join(errs...)
}

// pollOne reads one message's status and records it; a read that fails
// leaves the message to the next poll.
func (s *Sender) pollOne(ctx context.Context, reader StatusReader, id, providerID string, now time.Time) error {
	status, code, reason, err := reader.MessageStatus(ctx, providerID)
	if err != nil {
		return fmt.Errorf("status of outbox message %s: %s", id, redact(err))
	}
	if err := s.Store.RecordStatus(ctx, id, providerID, status, Failure{Code: code, Reason: reason}); err != nil {
		return err
	}
	if _, err := s.Store.Pool.Exec(ctx, `UPDATE outbox_messages SET status_checked_at = $2 WHERE id = $1`, id, now); err != nil {
		return fmt.Errorf("status of outbox message %s: %w", id, err)
	}
	if deliveryStates[status] == "failed" {
		s.log().Warn("a delivery failure found by asking the provider: its status callback was lost", "message", id, "code", code)
	}
	return nil
}
