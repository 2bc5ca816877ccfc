-- +goose Up
-- The payment API (package payments): a Stripe-compatible subset of
-- PaymentIntents and Refunds. Amounts are in minor units. Every write runs in
-- the idempotency middleware's transaction, so a row and the stored response
-- of the key that created it commit together (rule 3).
CREATE TABLE payment_intents (
    -- Insertion order for Stripe's newest-first lists and their cursors;
    -- created_at alone is not unique.
    seq                 bigint GENERATED ALWAYS AS IDENTITY,
    id                  text PRIMARY KEY CHECK (id LIKE 'pi\_%'),
    tenant_id           text NOT NULL,
    amount              bigint NOT NULL CHECK (amount BETWEEN 1 AND 99999999),
    currency            text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
    status              text NOT NULL CHECK (status IN ('requires_payment_method', 'requires_capture', 'succeeded', 'canceled')),
    capture_method      text NOT NULL CHECK (capture_method IN ('manual', 'automatic', 'automatic_async')),
    amount_captured     bigint NOT NULL DEFAULT 0,
    amount_refunded     bigint NOT NULL DEFAULT 0,
    payment_method      text,
    -- The charge a confirmed intent created (Stripe's latest_charge); NULL
    -- for a declined one.
    charge_id           text UNIQUE,
    customer            text,
    description         text,
    metadata            jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    -- Copied out of the metadata by the database itself, so the business
    -- constraint below can never disagree with what the client sent.
    booking_reference   text GENERATED ALWAYS AS (metadata ->> 'booking_reference') STORED,
    step                text GENERATED ALWAYS AS (metadata ->> 'step') STORED,
    cancellation_reason text CHECK (cancellation_reason IN ('duplicate', 'fraudulent', 'requested_by_customer', 'abandoned')),
    -- Stripe's last_payment_error of a declined confirmation.
    last_payment_error  jsonb,
    created_at          timestamptz NOT NULL,
    captured_at         timestamptz,
    canceled_at         timestamptz,
    UNIQUE (tenant_id, id),
    -- Money arithmetic the application must never get wrong, enforced where
    -- concurrent requests meet: a refund can never exceed what was captured,
    -- a capture never the authorised amount.
    CONSTRAINT payment_intents_captured_le_amount CHECK (amount_captured BETWEEN 0 AND amount),
    CONSTRAINT payment_intents_refunded_le_captured CHECK (amount_refunded BETWEEN 0 AND amount_captured),
    CONSTRAINT payment_intents_succeeded_captured CHECK ((status = 'succeeded') = (amount_captured > 0)),
    CONSTRAINT payment_intents_canceled_at CHECK ((status = 'canceled') = (canceled_at IS NOT NULL))
);

-- Rule 11: one live authorisation per booking step, whatever the
-- idempotency key (a reset workflow has a new run ID, hence a new key).
-- Declined (requires_payment_method) and canceled intents do not count, so
-- a booking may try another card or authorise again after a void.
CREATE UNIQUE INDEX payment_intents_one_authorisation
    ON payment_intents (tenant_id, booking_reference, coalesce(step, ''))
    WHERE status IN ('requires_capture', 'succeeded') AND booking_reference IS NOT NULL;
-- Lists and search: newest first within a tenant.
CREATE INDEX payment_intents_tenant_seq ON payment_intents (tenant_id, seq DESC);
-- Reconciliation by business reference (search by metadata).
CREATE INDEX payment_intents_reference ON payment_intents (tenant_id, booking_reference, seq DESC);

CREATE TABLE refunds (
    seq               bigint GENERATED ALWAYS AS IDENTITY,
    id                text PRIMARY KEY CHECK (id LIKE 're\_%'),
    tenant_id         text NOT NULL,
    payment_intent_id text NOT NULL,
    charge_id         text NOT NULL,
    amount            bigint NOT NULL CHECK (amount BETWEEN 1 AND 99999999),
    currency          text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
    status            text NOT NULL CHECK (status IN ('succeeded')),
    reason            text CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer')),
    metadata          jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at        timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, payment_intent_id) REFERENCES payment_intents (tenant_id, id)
);
CREATE INDEX refunds_payment_intent ON refunds (tenant_id, payment_intent_id);

-- +goose Down
DROP TABLE refunds;
DROP TABLE payment_intents;
