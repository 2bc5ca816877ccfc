-- +goose Up
-- A message withdrawn before any attempt to send it: a booking's
-- confirmation that was still waiting in the outbox when the customer's
-- cancel of the unconfirmed booking reached the appointment (they were
-- told "Wir stornieren ..." and must not read "bestätigt" after it).
-- Only a row never attempted can be withdrawn (outbox.Store.Withdraw).
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review', 'expired', 'withdrawn'));

-- +goose Down
UPDATE outbox_messages SET state = 'expired' WHERE state = 'withdrawn';
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_state_check;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_state_check
    CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review', 'expired'));
