-- +goose Up
-- The outbox relay (outbox.Sender). Twilio has no idempotency key for
-- messages, so a send is reserve-act-record (rule 6): the relay claims a
-- row and marks it attempted in a committed transaction before it calls
-- Twilio. A row that was attempted and has no provider ID is an unknown
-- outcome (rule 7): it is reconciled by looking the message up at Twilio,
-- and goes to 'review' if it is not found; it is never sent again blindly.
ALTER TABLE outbox_messages
    -- When the one send attempt started; NULL: never attempted (or the
    -- provider certainly did not take it and it may be sent again).
    ADD COLUMN attempted_at  timestamptz,
    -- The claim: no other relay touches the row before this time. An
    -- attempted row is claimed for the send timeout, after which it is due
    -- for reconciliation.
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN claim_token   text,
    ADD COLUMN attempts      integer NOT NULL DEFAULT 0,
    ADD COLUMN last_error    text;

-- One provider message belongs to one outbox row: reconciliation can never
-- attribute the same Twilio message to two rows (rule 11).
CREATE UNIQUE INDEX outbox_messages_provider_id ON outbox_messages (provider_id) WHERE provider_id IS NOT NULL;

-- +goose Down
DROP INDEX outbox_messages_provider_id;
ALTER TABLE outbox_messages
    DROP COLUMN last_error,
    DROP COLUMN attempts,
    DROP COLUMN claim_token,
    DROP COLUMN claimed_until,
    DROP COLUMN attempted_at;
