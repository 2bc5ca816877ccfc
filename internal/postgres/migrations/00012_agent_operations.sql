-- +goose Up
-- Operations issued to AI agents (package agent) and honoured once: the
-- first book_appointment under an operation_id fixes its arguments, so the
-- same ID with other arguments is refused instead of booking something
-- else. The row holds a hash of the canonical arguments, no personal data.
CREATE TABLE agent_operations (
    tenant_id    text NOT NULL,
    operation_id text NOT NULL,
    args_hash    text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, operation_id)
);

-- +goose Down
DROP TABLE agent_operations;
