-- +goose Up
-- When the relay last asked the provider for the delivery status of a
-- message still 'sent': a status callback lost at the gateway (Twilio
-- does not retry one) would otherwise leave a failed message 'sent' for
-- ever, and its SMS fallback would never go.
ALTER TABLE outbox_messages ADD COLUMN status_checked_at timestamptz;
CREATE INDEX outbox_messages_status_poll ON outbox_messages (updated_at)
    WHERE state = 'sent' AND provider_id IS NOT NULL;

-- +goose Down
DROP INDEX outbox_messages_status_poll;
ALTER TABLE outbox_messages DROP COLUMN status_checked_at;
