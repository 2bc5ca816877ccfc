package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A customer who called from a landline, or whose phone has no WhatsApp,
// cannot receive the payment link or the confirmation on WhatsApp: the
// provider accepts the message and then reports it undeliverable (Twilio
// 63003, by status callback). Such a message goes once more, by SMS, as a
// row of its own (kind + FallbackSuffix, unique like every row), so that
// it is sent, reconciled and shown like any other and never twice.

// FallbackSuffix ends the kind of a message's SMS fallback.
const FallbackSuffix = ":sms"

// maxFallbacksPerRun bounds the fallbacks one RunOnce reserves.
const maxFallbacksPerRun = 100

// fallBack reserves the SMS fallback of every failed WhatsApp message
// whose failure code is one of s.SMSFallback and that has none yet. Rows
// already redacted, or whose moment has passed, get none.
func (s *Sender) fallBack(ctx context.Context) error {
	if len(s.SMSFallback) == 0 {
		return nil
	}
	rows, err := s.Store.Pool.Query(ctx, `SELECT o.id, o.tenant_id, o.reference, o.kind, o.recipient, o.body, o.fields, o.sealed, o.accepted_at, o.send_by
		FROM outbox_messages o
		WHERE o.channel = 'whatsapp' AND o.state = 'failed' AND o.failure_code = ANY($1) AND o.redacted_at IS NULL
		  AND (o.send_by IS NULL OR o.send_by > $2)
		  AND NOT EXISTS (SELECT 1 FROM outbox_messages f
			WHERE f.tenant_id = o.tenant_id AND f.reference = o.reference AND f.kind = o.kind || $3)
		ORDER BY o.updated_at LIMIT $4`, s.SMSFallback, s.now(), FallbackSuffix, maxFallbacksPerRun)
	if err != nil {
		return fmt.Errorf("sms fallbacks: %w", err)
	}
	failed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fallback, error) {
		var f fallback
		var acceptedAt, sendBy *time.Time
		err := r.Scan(&f.id, &f.m.Tenant, &f.m.Reference, &f.m.Kind, &f.m.Recipient, &f.m.Body, &f.fields, &f.sealed, &acceptedAt, &sendBy)
		if acceptedAt != nil {
			f.m.AcceptedAt = *acceptedAt
		}
		if sendBy != nil {
			f.m.SendBy = *sendBy
		}
		return f, err
	})
	if err != nil {
		return fmt.Errorf("sms fallbacks: %w", err)
	}
	var errs []error
	for _, f := range failed {
		errs = append(errs, s.reserveFallback(ctx, f))
	}
	return errors.Join(errs...)
}

// fallback is a failed WhatsApp row as read for its SMS fallback.
type fallback struct {
	id             string
	m              Message
	fields, sealed []byte
}

// reserveFallback reserves f's message once more, as an SMS to the same
// number with the same text, under a key derived from f's row.
func (s *Sender) reserveFallback(ctx context.Context, f fallback) error {
	recipient, body, _, err := s.Store.Open(f.id, f.m.Recipient, f.m.Body, f.fields, f.sealed)
	if err != nil {
		return fmt.Errorf("sms fallback of outbox message %s: %w", f.id, err)
	}
	m := f.m
	m.Kind, m.Channel, m.Recipient, m.Body = m.Kind+FallbackSuffix, "sms", strings.TrimPrefix(recipient, "whatsapp:"), body
	if _, err := s.Store.Reserve(ctx, "sms-fallback:"+f.id, m); err != nil {
		return fmt.Errorf("sms fallback of outbox message %s: %w", f.id, err)
	}
	s.log().Info("whatsapp message undeliverable to the number; sent by sms instead", "id", f.id, "kind", m.Kind)
	return nil
}
