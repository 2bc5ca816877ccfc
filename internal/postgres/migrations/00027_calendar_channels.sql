-- +goose Up
-- The push channel of each resource's own calendar (package shopcal): a
-- Google Calendar watch channel or a Microsoft Graph subscription that
-- calls the gateway when staff change the calendar, so the worker reads
-- it again at once instead of at the next poll. One per resource: a new
-- channel (renewal, a second worker racing) replaces the row, and the
-- one it replaced is stopped at the provider. The gateway finds a
-- notification's channel by id and checks its secret against the hash;
-- the secret itself is only at the provider. No personal data.
CREATE TABLE calendar_channels (
    tenant_id   text NOT NULL,
    resource_id text NOT NULL,
    provider    text NOT NULL CHECK (provider IN ('google', 'microsoft')),
    calendar    text NOT NULL, -- which calendar it watches: a new one is watched anew
    channel_id  text NOT NULL UNIQUE,
    secret_hash bytea NOT NULL,
    external_id text NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, resource_id),
    FOREIGN KEY (tenant_id, resource_id) REFERENCES calendar_resources (tenant_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE calendar_channels;
