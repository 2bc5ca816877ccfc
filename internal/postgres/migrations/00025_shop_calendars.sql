-- +goose Up
-- The shop's own calendar of a resource (tenants.yaml resources[].calendar:
-- its CalDAV URL, user and the name of the secret holding the password),
-- where bookonce writes the resource's bookings. NULL: none.
ALTER TABLE calendar_resources ADD COLUMN shop_calendar jsonb;

-- +goose Down
ALTER TABLE calendar_resources DROP COLUMN shop_calendar;
