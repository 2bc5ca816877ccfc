-- +goose Up
-- Payment webhooks (issue #13) are recorded in the inbox like Twilio's. An
-- event whose payment workflow does not exist (closed, or never started)
-- is kept as 'unmatched': answered, never relayed, shown on the ops page.
ALTER TABLE inbox_events DROP CONSTRAINT inbox_events_state_check;
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_state_check CHECK (state IN ('pending', 'delivered', 'unmatched'));
CREATE INDEX inbox_events_unmatched ON inbox_events (received_at) WHERE state = 'unmatched';

-- +goose Down
DROP INDEX inbox_events_unmatched;
DELETE FROM inbox_events WHERE state = 'unmatched';
ALTER TABLE inbox_events DROP CONSTRAINT inbox_events_state_check;
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_state_check CHECK (state IN ('pending', 'delivered'));
