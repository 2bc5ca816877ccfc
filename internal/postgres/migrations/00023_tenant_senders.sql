-- +goose Up
-- The numbers a shop's messages leave from, per channel (tenants.yaml
-- senders): its WhatsApp sender and an SMS-capable number, each one of
-- its twilio_numbers. '{}': the first of its numbers for both.
ALTER TABLE tenants ADD COLUMN senders jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE tenants DROP COLUMN senders;
