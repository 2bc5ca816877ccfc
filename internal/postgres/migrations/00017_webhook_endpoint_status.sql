-- +goose Up
-- Webhook endpoints that keep failing are disabled, as Stripe does
-- (docs/payment-links.md): each failed attempt in a row counts, a 2xx
-- starts over, and an endpoint failing for long enough is disabled with a
-- webhook_endpoint.disabled event. The tenant re-enables it with
-- POST /v1/webhook_endpoints/{id} disabled=false (disabled=true disables
-- it by hand).
ALTER TABLE webhook_endpoints
    ADD COLUMN status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
    -- 'failing': by the deliverer; 'user': by the tenant's request.
    ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('failing', 'user')),
    ADD COLUMN disabled_at timestamptz,
    -- Failed attempts since the last 2xx, and when the first of them was.
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    ADD COLUMN failing_since timestamptz,
    ADD CONSTRAINT webhook_endpoints_disabled CHECK
        ((status = 'disabled') = (disabled_at IS NOT NULL) AND (status = 'disabled') = (disabled_reason IS NOT NULL));

-- Why an undelivered event is not being attempted: its endpoint was
-- disabled ('endpoint_disabled'). NULL: pending as usual, or delivered.
-- Re-enabling the endpoint clears it and the attempts resume.
ALTER TABLE webhook_deliveries ADD COLUMN held text CHECK (held IN ('endpoint_disabled'));

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN held;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled,
    DROP COLUMN failing_since, DROP COLUMN consecutive_failures, DROP COLUMN disabled_at,
    DROP COLUMN disabled_reason, DROP COLUMN status;
