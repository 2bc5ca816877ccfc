-- +goose Up
-- The calendar: resources (bays, technicians) with opening hours, services
-- with durations, and reservations. A reservation is a hold that may be
-- confirmed into a booking; both block their resource's time.
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE calendar_resources (
    tenant_id  text NOT NULL,
    id         text NOT NULL,
    name       text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('bay', 'technician')),
    -- Opening hours in the business time zone, the same every open weekday.
    opens_at   time NOT NULL,
    closes_at  time NOT NULL CHECK (closes_at > opens_at),
    -- ISO weekdays (1 = Monday ... 7 = Sunday) the resource is open.
    weekdays   smallint[] NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE calendar_services (
    tenant_id        text NOT NULL,
    id               text NOT NULL,
    name             text NOT NULL,
    duration_minutes integer NOT NULL CHECK (duration_minutes > 0),
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE calendar_reservations (
    id              text PRIMARY KEY,
    tenant_id       text NOT NULL,
    resource_id     text NOT NULL,
    service         text NOT NULL,
    customer        text NOT NULL,
    -- The caller's business reference (the booking's workflow ID).
    reference       text NOT NULL,
    slot            tstzrange NOT NULL,
    status          text NOT NULL CHECK (status IN ('held', 'confirmed', 'released', 'expired', 'cancelled')),
    hold_expires_at timestamptz NOT NULL,
    booking_id      text UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, resource_id) REFERENCES calendar_resources (tenant_id, id),
    FOREIGN KEY (tenant_id, service) REFERENCES calendar_services (tenant_id, id),
    -- Rule 11: the database, not application code, forbids two active
    -- reservations of one resource that overlap in time.
    CONSTRAINT calendar_no_overlap EXCLUDE USING gist (
        tenant_id WITH =, resource_id WITH =, slot WITH &&
    ) WHERE (status IN ('held', 'confirmed'))
);

-- One active reservation per business reference: protects even a caller
-- whose idempotency key changed (a reset workflow has a new run ID).
CREATE UNIQUE INDEX calendar_reservations_active_reference
    ON calendar_reservations (tenant_id, reference) WHERE status IN ('held', 'confirmed');
CREATE INDEX calendar_reservations_customer ON calendar_reservations (tenant_id, customer);

-- Resources and services are configuration (package tenants): the demo
-- tenant comes from deploy/tenants.demo.yaml, applied by `make run`, the
-- tests and the drill. goose records applied versions without checksums,
-- so databases that ran this file with its former demo INSERTs stay valid:
-- applying the demo file over them adopts those rows.

-- +goose Down
DROP TABLE calendar_reservations;
DROP TABLE calendar_services;
DROP TABLE calendar_resources;
