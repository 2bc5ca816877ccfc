-- +goose Up
-- Payment links (issue #13): Checkout Sessions with a hosted payment page,
-- Stripe-style events, webhook endpoints and their deliveries. Like every
-- payment write, a state change and the event that reports it commit in one
-- transaction, and so do an event and its deliveries (the outbox): never an
-- event without its change, never a change whose event can be lost.

-- PaymentIntents may now be created without confirming them (Stripe's
-- requires_payment_method / requires_confirmation) and wait for a 3-D Secure
-- approval on the hosted page (requires_action).
ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_status_check;
ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_status_check CHECK (status IN
    ('requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture', 'succeeded', 'canceled'));

CREATE TABLE checkout_sessions (
    seq                 bigint GENERATED ALWAYS AS IDENTITY,
    -- The ID is the capability of the hosted page's URL: about 143 random
    -- bits, like Stripe's.
    id                  text PRIMARY KEY CHECK (id LIKE 'cs\_test\_%'),
    tenant_id           text NOT NULL,
    status              text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
    amount_total        bigint NOT NULL CHECK (amount_total BETWEEN 1 AND 99999999),
    currency            text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
    -- [{"name":..., "unit_amount":..., "quantity":...}] as sent.
    line_items          jsonb NOT NULL CHECK (jsonb_typeof(line_items) = 'array'),
    url                 text NOT NULL,
    success_url         text NOT NULL,
    cancel_url          text,
    client_reference_id text,
    locale              text NOT NULL,
    metadata            jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    -- payment_intent_data: what the PaymentIntent created on payment gets.
    capture_method      text NOT NULL CHECK (capture_method IN ('manual', 'automatic', 'automatic_async')),
    description         text,
    intent_metadata     jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(intent_metadata) = 'object'),
    -- The intent of the first payment attempt; declined attempts reuse it.
    payment_intent_id   text,
    -- The last decline, shown on the page until another card is tried.
    last_error          text,
    created_at          timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    completed_at        timestamptz,
    expired_at          timestamptz,
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, payment_intent_id) REFERENCES payment_intents (tenant_id, id),
    CONSTRAINT checkout_sessions_complete CHECK ((status = 'complete') = (completed_at IS NOT NULL)),
    CONSTRAINT checkout_sessions_complete_has_intent CHECK (status <> 'complete' OR payment_intent_id IS NOT NULL),
    CONSTRAINT checkout_sessions_expired CHECK ((status = 'expired') = (expired_at IS NOT NULL))
);
-- The lazy-expiry sweep: open sessions by deadline.
CREATE INDEX checkout_sessions_open ON checkout_sessions (expires_at) WHERE status = 'open';

CREATE TABLE events (
    seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id               text PRIMARY KEY CHECK (id LIKE 'evt\_%'),
    tenant_id        text NOT NULL,
    type             text NOT NULL,
    -- The ID of data.object, for the once-only guard below.
    object_id        text NOT NULL,
    -- data.object as it was when the event happened (Stripe's snapshot).
    object           jsonb NOT NULL CHECK (jsonb_typeof(object) = 'object'),
    request_id       text,
    idempotency_key  text,
    created_at       timestamptz NOT NULL
);
CREATE INDEX events_tenant_seq ON events (tenant_id, seq DESC);
-- A session completes or expires once; a second event of either kind is a
-- bug the schema refuses rather than a webhook a customer acts on twice.
CREATE UNIQUE INDEX events_session_once ON events (tenant_id, type, object_id)
    WHERE type IN ('checkout.session.completed', 'checkout.session.expired');

CREATE TABLE webhook_endpoints (
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    id              text PRIMARY KEY CHECK (id LIKE 'we\_%'),
    tenant_id       text NOT NULL,
    url             text NOT NULL,
    -- Stripe's whsec_ signing secret; answered once, on creation.
    secret          text NOT NULL CHECK (secret LIKE 'whsec\_%'),
    enabled_events  text[] NOT NULL CHECK (cardinality(enabled_events) > 0),
    description     text,
    created_at      timestamptz NOT NULL,
    UNIQUE (tenant_id, id)
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id);

-- The outbox: one row per event and endpoint, written with the event.
CREATE TABLE webhook_deliveries (
    endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id         text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempts         integer NOT NULL DEFAULT 0,
    -- When the next attempt is due; a claimed attempt pushes it out by a
    -- lease, so a deliverer that dies mid-request is retried, not lost.
    next_attempt_at  timestamptz NOT NULL,
    delivered_at     timestamptz,
    last_status      integer,
    last_error       text,
    PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE delivered_at IS NULL;

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE events;
DROP TABLE checkout_sessions;
ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_status_check;
ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_status_check CHECK (status IN
    ('requires_payment_method', 'requires_capture', 'succeeded', 'canceled'));
