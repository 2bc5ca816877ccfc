-- +goose Up
-- Tenants as configuration (package tenants, docs/tenants.md): each shop
-- is a row with its time zone, language, policies and message templates,
-- reached through its API token digests and Twilio numbers. The file
-- tenants.yaml is the source; `starter tenants apply` writes it here in
-- one transaction and every process reloads it from here.
CREATE TABLE tenants (
    id         text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    name       text NOT NULL,
    -- IANA name; checked by the application (PostgreSQL's list may differ).
    timezone   text NOT NULL,
    language   text NOT NULL CHECK (language IN ('de', 'en')),
    -- {"hold_ttl": "10m0s", "dedup_window": ..., "cancellation_window": ...,
    --  "reminders": ["24h0m0s"], "quiet_hours": "21:00-08:00"}
    policies   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(policies) = 'object'),
    -- {"de": {"confirmation": "Ihr Termin ..."}}: overrides of the built-in texts.
    templates  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(templates) = 'object'),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- API tokens by SHA-256 digest only: a database dump grants no access.
-- The primary key makes one token name one tenant.
CREATE TABLE tenant_api_tokens (
    token_sha256 text PRIMARY KEY CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
    tenant_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
);
CREATE INDEX tenant_api_tokens_tenant ON tenant_api_tokens (tenant_id);

-- Twilio numbers (E.164, without "whatsapp:"): a call or message to one
-- belongs to exactly one tenant, whatever two files say.
CREATE TABLE tenant_numbers (
    number    text PRIMARY KEY CHECK (number ~ '^\+[1-9][0-9]{6,14}$'),
    tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
);
CREATE INDEX tenant_numbers_tenant ON tenant_numbers (tenant_id);

-- What the calendar lacked. opens_at, closes_at and weekdays stay what the
-- calendar API reads: the open weekdays and the hours they share.
ALTER TABLE calendar_resources
    -- Hours per ISO weekday, {"1": ["08:00", "18:00"], ...}; NULL for rows
    -- written before (their hours are opens_at-closes_at on weekdays).
    ADD COLUMN weekly_hours jsonb CHECK (weekly_hours IS NULL OR jsonb_typeof(weekly_hours) = 'object'),
    ADD COLUMN closed_days  date[] NOT NULL DEFAULT '{}',
    -- Removed from the configuration while reservations still refer to it:
    -- kept for their history (the foreign keys), offered to nobody.
    ADD COLUMN retired_at   timestamptz;

ALTER TABLE calendar_services
    -- {"de": ["Reifenwechsel", ...], "en": ["tire change", ...]}; the first
    -- name of a language is the service's label in it.
    ADD COLUMN synonyms         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(synonyms) = 'object'),
    ADD COLUMN deposit_amount   bigint CHECK (deposit_amount BETWEEN 1 AND 99999999),
    ADD COLUMN deposit_currency text CHECK (deposit_currency ~ '^[a-z]{3}$'),
    -- The catalogue order of the file (ties between synonyms follow it).
    ADD COLUMN ordinal          integer NOT NULL DEFAULT 0,
    ADD COLUMN retired_at       timestamptz;

-- Which resources can do a service.
CREATE TABLE calendar_service_resources (
    tenant_id   text NOT NULL,
    service_id  text NOT NULL,
    resource_id text NOT NULL,
    PRIMARY KEY (tenant_id, service_id, resource_id),
    FOREIGN KEY (tenant_id, service_id) REFERENCES calendar_services (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, resource_id) REFERENCES calendar_resources (tenant_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE calendar_service_resources;
ALTER TABLE calendar_services
    DROP COLUMN retired_at, DROP COLUMN ordinal, DROP COLUMN deposit_currency,
    DROP COLUMN deposit_amount, DROP COLUMN synonyms;
ALTER TABLE calendar_resources
    DROP COLUMN retired_at, DROP COLUMN closed_days, DROP COLUMN weekly_hours;
DROP TABLE tenant_numbers;
DROP TABLE tenant_api_tokens;
DROP TABLE tenants;
