-- +goose Up
-- The turns of each call on Twilio's ConversationRelay (package channels):
-- the caller's sentences carry no ID of their own, so the gateway numbers
-- them. A sentence equal to the call's last one is that turn again (a
-- reconnected session replays what it had not been answered), anything
-- else the next turn; the inbox key of a turn is CallSid:relay:<turn>.
-- The sentence is kept only as a digest bound to the call. Redacted with
-- the inbox by the retention sweep.
CREATE TABLE voice_relay_turns (
    call_sid   text PRIMARY KEY,
    turn       integer NOT NULL,
    prompt     bytea NOT NULL, -- SHA-256 of call_sid and the turn's sentence
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE voice_relay_turns;
