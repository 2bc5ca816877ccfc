-- +goose Up
-- What staff entered in the shop's own calendar of a resource (package
-- shopcal), mirrored: each instance of an event busy at the provider, by
-- its UID there. A block takes the resource's time like a reservation
-- (availability skips it, a hold on it is refused), but it is not one: a
-- block may lie over a booking made before staff entered it, which is a
-- conflict for a person, so it takes no part in calendar_no_overlap. Only
-- times and the provider's UID: no titles, no customers' names.
CREATE TABLE calendar_blocks (
    tenant_id   text NOT NULL,
    resource_id text NOT NULL,
    uid         text NOT NULL,
    slot        tstzrange NOT NULL,
    synced_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, resource_id, uid, slot),
    FOREIGN KEY (tenant_id, resource_id) REFERENCES calendar_resources (tenant_id, id)
);
CREATE INDEX calendar_blocks_slot ON calendar_blocks USING gist (tenant_id, resource_id, slot);

-- +goose Down
DROP TABLE calendar_blocks;
