-- +goose Up
-- Idempotency keys (package idempotency). One row per key, scoped by tenant
-- and operation (rule 2), claimed with a unique constraint before any effect
-- (rule 3) and completed in the same transaction as the effect.
CREATE TABLE idempotency_keys (
    tenant_id        text NOT NULL,
    -- The route pattern, e.g. 'POST /v1/holds'.
    operation        text NOT NULL,
    idempotency_key  text NOT NULL CHECK (octet_length(idempotency_key) BETWEEN 1 AND 255),
    -- SHA-256 of the canonical request; same key, other payload -> 422.
    fingerprint      bytea NOT NULL CHECK (octet_length(fingerprint) = 32),
    state            text NOT NULL CHECK (state IN ('pending', 'completed')),
    -- The claim's random owner token: only the holder of the current lease
    -- may complete or release the key (fencing after a takeover).
    owner            uuid NOT NULL,
    -- A pending claim is protected until then; afterwards a retry may take
    -- it over.
    locked_until     timestamptz NOT NULL,
    status_code      integer,
    -- Only the headers replay needs (Content-Type, Location, ...).
    response_headers jsonb,
    -- bytea, not jsonb or text: a replay must be byte-identical.
    response_body    bytea,
    resource_type    text,
    resource_id      text,
    replays          integer NOT NULL DEFAULT 0,
    lease_takeovers  integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    completed_at     timestamptz,
    expires_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, operation, idempotency_key),
    CONSTRAINT idempotency_keys_completed_has_response CHECK (
        state = 'pending' OR (status_code IS NOT NULL AND response_body IS NOT NULL AND completed_at IS NOT NULL)
    )
);

-- The reaper deletes by expiry in small batches.
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- New keys per tenant and minute, for the per-tenant quota. A table rather
-- than process memory so that the limit holds across processes.
CREATE TABLE idempotency_quota (
    tenant_id text NOT NULL,
    minute    timestamptz NOT NULL,
    claims    integer NOT NULL,
    PRIMARY KEY (tenant_id, minute)
);

-- +goose Down
DROP TABLE idempotency_quota;
DROP TABLE idempotency_keys;
