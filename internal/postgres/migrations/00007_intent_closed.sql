-- +goose Up
-- An intent whose appointment ended without a booking (rejected, payment
-- failed, cancelled) is closed: the same wish later is a new attempt, not a
-- merge into the failed one.
ALTER TABLE booking_intents ADD COLUMN closed_at timestamptz;

-- +goose Down
ALTER TABLE booking_intents DROP COLUMN closed_at;
