-- +goose Up
-- Retention (package retention, issue #16): personal data (phone numbers,
-- message texts) is redacted once it is older than BOOKONCE_RETENTION.
-- An inbox row keeps its key and state, so a redelivery is still dropped
-- at the edge; an outbox row keeps its state and provider ID. redacted_at
-- says when the sweep blanked a row, so it never touches it twice.
ALTER TABLE inbox_events ADD COLUMN redacted_at timestamptz;
ALTER TABLE outbox_messages ADD COLUMN redacted_at timestamptz;

-- What the sweep looks for, oldest first: small indexes, since a row
-- leaves them once redacted.
CREATE INDEX inbox_events_unredacted ON inbox_events (received_at)
    WHERE redacted_at IS NULL AND state = 'delivered';
CREATE INDEX outbox_messages_unredacted ON outbox_messages (updated_at)
    WHERE redacted_at IS NULL AND state IN ('sent', 'delivered', 'failed');
CREATE INDEX booking_intents_slot_start ON booking_intents (slot_start);
CREATE INDEX dedup_decisions_created_at ON dedup_decisions (created_at);

-- +goose Down
DROP INDEX dedup_decisions_created_at;
DROP INDEX booking_intents_slot_start;
DROP INDEX outbox_messages_unredacted;
DROP INDEX inbox_events_unredacted;
ALTER TABLE outbox_messages DROP COLUMN redacted_at;
ALTER TABLE inbox_events DROP COLUMN redacted_at;
