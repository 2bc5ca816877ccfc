-- +goose Up
-- Personal data at rest (issue #16): with payload keys configured
-- (BOOKONCE_PAYLOAD_KEYS), a row's personal fields are sealed with
-- AES-256-GCM (payloadcrypt.Seal) into `sealed`, bound to the row (table
-- and key columns) so a blob cannot be moved to another row. The clear
-- columns then hold nothing personal: an empty response body, an empty
-- inbox payload, an empty outbox body, masked numbers where the ops page
-- shows them. NULL: the row is in clear (written before the keys, or
-- without keys), and is read as before, so an upgrade needs no rewrite.
-- Nullable columns without a default: adding them rewrites no table.
ALTER TABLE idempotency_keys ADD COLUMN sealed bytea;
ALTER TABLE inbox_events ADD COLUMN sealed bytea;
ALTER TABLE outbox_messages ADD COLUMN sealed bytea;

-- +goose Down
ALTER TABLE outbox_messages DROP COLUMN sealed;
ALTER TABLE inbox_events DROP COLUMN sealed;
ALTER TABLE idempotency_keys DROP COLUMN sealed;
