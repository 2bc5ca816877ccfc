-- +goose Up
-- The inbox: every webhook delivery is recorded before any effect (rule
-- 10). A redelivery hits the primary key and is dropped at the edge.
CREATE TABLE inbox_events (
    provider     text NOT NULL,
    event_id     text NOT NULL,
    tenant_id    text NOT NULL,
    kind         text NOT NULL,
    customer     text NOT NULL,
    channel      text NOT NULL,
    payload      jsonb NOT NULL,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered')),
    received_at  timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    PRIMARY KEY (provider, event_id)
);
CREATE INDEX inbox_events_pending ON inbox_events (received_at) WHERE state = 'pending';

-- Booking intents seen from any channel. One active row per intent: a
-- second delivery of the same wish (other channel, other phrasing) meets
-- it and is merged.
CREATE TABLE booking_intents (
    tenant_id   text NOT NULL,
    intent_id   text NOT NULL,
    customer    text NOT NULL,
    service     text NOT NULL,
    slot_start  timestamptz NOT NULL,
    channel     text NOT NULL,
    workflow_id text NOT NULL,
    events      text[] NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, intent_id)
);
CREATE INDEX booking_intents_customer ON booking_intents (tenant_id, customer, created_at);

-- The decision taken under a dedup activity's key, so a retried activity
-- returns it instead of deciding again.
CREATE TABLE dedup_decisions (
    idempotency_key text PRIMARY KEY,
    tenant_id       text NOT NULL,
    decision        text NOT NULL CHECK (decision IN ('new', 'merge', 'review')),
    intent_id       text NOT NULL,
    workflow_id     text NOT NULL,
    review_case     text,
    channel_pair    text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE dedup_decisions;
DROP TABLE booking_intents;
DROP TABLE inbox_events;
