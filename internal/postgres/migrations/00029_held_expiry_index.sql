-- +goose NO TRANSACTION
-- +goose Up
-- Every new hold and every decision about a tenant's reservations first
-- expires its lapsed holds (calendar.expireHolds: WHERE tenant_id AND
-- status = 'held' AND hold_expires_at <= now). No index served that:
-- it read every active reservation of the tenant (or, planned on stale
-- statistics, the tenant's whole overlap index), so its cost per booking
-- grew with the bookings open (the soak, docs/benchmarks.md). Holds are
-- few at any moment; this index holds only them. Built concurrently, so
-- that writes go on while it is built; a build that failed leaves an
-- invalid index, dropped first when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS calendar_reservations_held_expiry;
CREATE INDEX CONCURRENTLY calendar_reservations_held_expiry
    ON calendar_reservations (tenant_id, hold_expires_at) WHERE status = 'held';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS calendar_reservations_held_expiry;
