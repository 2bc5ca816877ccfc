-- +goose Up
-- One customer, one service, one time: a second active reservation (hold or
-- booking) of the same customer for the same service with an overlapping
-- slot is refused whatever its reference, so a booking made by hand at the
-- front desk stops the agent from booking the same wish again on another
-- bay. Only a reservation marked deliberate_second (a reviewer decided
-- "separate", or the customer explicitly asked for a second car) may
-- overlap: a genuine second booking is never swallowed.
ALTER TABLE calendar_reservations ADD COLUMN deliberate_second boolean NOT NULL DEFAULT false;

-- Pairs that already overlap cannot be decided now: the later reservation
-- of each pair is kept and marked deliberate, so the constraint can be
-- created; nothing is cancelled behind anyone's back.
UPDATE calendar_reservations later SET deliberate_second = true
WHERE later.status IN ('held', 'confirmed') AND EXISTS (
    SELECT 1 FROM calendar_reservations earlier
    WHERE earlier.tenant_id = later.tenant_id AND earlier.customer = later.customer
      AND earlier.service = later.service AND earlier.slot && later.slot
      AND earlier.status IN ('held', 'confirmed')
      AND (earlier.created_at, earlier.id) < (later.created_at, later.id));

-- Rule 11 again: the database, not a pre-check, forbids the double booking.
ALTER TABLE calendar_reservations ADD CONSTRAINT calendar_customer_no_double_booking EXCLUDE USING gist (
    tenant_id WITH =, customer WITH =, service WITH =, slot WITH &&
) WHERE (status IN ('held', 'confirmed') AND NOT deliberate_second);

-- +goose Down
ALTER TABLE calendar_reservations DROP CONSTRAINT calendar_customer_no_double_booking;
ALTER TABLE calendar_reservations DROP COLUMN deliberate_second;
