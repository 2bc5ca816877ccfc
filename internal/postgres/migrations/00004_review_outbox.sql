-- +goose Up
-- Review cases: uncertain outcomes and potential duplicates wait here for a
-- person. One case per idempotency key, so a retried activity opens the
-- same case again instead of a second one.
CREATE TABLE review_cases (
    id              text PRIMARY KEY,
    tenant_id       text NOT NULL,
    workflow_id     text NOT NULL,
    reason          text NOT NULL,
    details         jsonb NOT NULL DEFAULT '{}',
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    resolution      text CHECK (resolution IN ('retry', 'abandon', 'merge', 'separate', 'proceed')),
    idempotency_key text NOT NULL UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    CHECK ((status = 'resolved') = (resolution IS NOT NULL))
);
CREATE INDEX review_cases_open ON review_cases (tenant_id, created_at) WHERE status = 'open';

-- The outbox: every message leaves through a reserved row, unique per
-- booking and kind (rule 10), so a confirmation can exist only once
-- whatever retries or resets happen upstream.
CREATE TABLE outbox_messages (
    id              text PRIMARY KEY,
    tenant_id       text NOT NULL,
    reference       text NOT NULL,
    kind            text NOT NULL,
    channel         text NOT NULL,
    recipient       text NOT NULL,
    body            text NOT NULL,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'delivered', 'failed', 'review')),
    provider_id     text,
    idempotency_key text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, reference, kind)
);
CREATE INDEX outbox_messages_pending ON outbox_messages (created_at) WHERE state = 'pending';

-- +goose Down
DROP TABLE outbox_messages;
DROP TABLE review_cases;
