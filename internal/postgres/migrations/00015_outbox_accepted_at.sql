-- +goose Up
-- A confirmation keeps when its booking's webhook was accepted (issue #17),
-- so the relay can record the booking's last phase, message_sent, in
-- bookonce_booking_phase_seconds. NULL for other messages and rows
-- reserved before.
ALTER TABLE outbox_messages ADD COLUMN accepted_at timestamptz;

-- +goose Down
ALTER TABLE outbox_messages DROP COLUMN accepted_at;
