-- +goose Up
-- Consent (package consent): a customer who writes STOP (or the shop's
-- own keyword) gets no more reminders from that shop on any channel; START
-- takes it back. Every change is a row, with the message that made it and
-- when: the audit trail a shop can show. The customer's current state is
-- the latest row; none means subscribed. Keyed by the customer key, never
-- the number. event_id makes a redelivered STOP one change, not two.
CREATE TABLE consent_events (
    id           bigserial PRIMARY KEY,
    tenant_id    text NOT NULL,
    customer_key text NOT NULL,
    action       text NOT NULL CHECK (action IN ('opt_out', 'opt_in')),
    channel      text NOT NULL,
    event_id     text NOT NULL,
    at           timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, event_id)
);
CREATE INDEX consent_events_customer ON consent_events (tenant_id, customer_key, at DESC, id DESC);

-- A message the relay did not send because its recipient opted out of its
-- kind (a reminder): kept, with the reason, instead of sent.
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review', 'expired', 'withdrawn', 'suppressed'));
DROP INDEX outbox_messages_unredacted;
CREATE INDEX outbox_messages_unredacted ON outbox_messages (updated_at)
    WHERE redacted_at IS NULL AND state IN ('sent', 'delivered', 'failed', 'suppressed');

-- +goose Down
DROP INDEX outbox_messages_unredacted;
CREATE INDEX outbox_messages_unredacted ON outbox_messages (updated_at)
    WHERE redacted_at IS NULL AND state IN ('sent', 'delivered', 'failed');
UPDATE outbox_messages SET state = 'withdrawn' WHERE state = 'suppressed';
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review', 'expired', 'withdrawn'));
DROP TABLE consent_events;
