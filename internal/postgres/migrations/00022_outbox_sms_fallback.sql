-- +goose Up
-- The provider's error code of a message that failed after it was
-- accepted (from the status callback), so that the relay can act on it:
-- a WhatsApp message to a number without WhatsApp (Twilio 63003) goes
-- once more, by SMS, as its own row (kind '<kind>:sms').
ALTER TABLE outbox_messages ADD COLUMN failure_code text;
CREATE INDEX outbox_messages_fallback ON outbox_messages (updated_at)
    WHERE channel = 'whatsapp' AND state = 'failed' AND failure_code IS NOT NULL;

-- +goose Down
DROP INDEX outbox_messages_fallback;
ALTER TABLE outbox_messages DROP COLUMN failure_code;
