-- +goose Up
-- The number a message was sent from: each shop sends from its own
-- Twilio number (tenants.yaml twilio_numbers). Stored when the relay
-- marks the row attempted, so that reconciling an unknown outcome asks
-- Twilio for the message between the same two numbers, whatever the
-- configuration says later. NULL: the relay's default sender
-- (TWILIO_FROM), as every row attempted before this column.
ALTER TABLE outbox_messages ADD COLUMN sender text;

-- +goose Down
ALTER TABLE outbox_messages DROP COLUMN sender;
