-- +goose Up
-- A customer message has a moment after which it must not go out: a
-- confirmation or reminder after the slot began, a payment link after it
-- expired (issue #27). The relay records a row it reaches too late as
-- 'expired', with the reason in last_error, instead of sending it late.
-- NULL: the message has no such moment (and rows reserved before).
ALTER TABLE outbox_messages ADD COLUMN send_by timestamptz;
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review', 'expired'));

-- +goose Down
UPDATE outbox_messages SET state = 'failed' WHERE state = 'expired';
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review'));
ALTER TABLE outbox_messages DROP COLUMN send_by;
