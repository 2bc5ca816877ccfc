-- +goose Up
-- WhatsApp's 24-hour customer service window (issue #30): free-form text
-- reaches a customer only within 24 hours of their last message to the
-- shop; outside it only an approved template does.
--
-- The inbox keeps the customer key of each inbound message (the same key
-- as the workflows', so sealed rows can be found without the number),
-- and the relay asks it when the customer last wrote. NULL for rows
-- written before, and for events that are not a customer's message.
ALTER TABLE inbox_events ADD COLUMN customer_key text;
CREATE INDEX inbox_events_window ON inbox_events (tenant_id, customer_key, received_at)
    WHERE customer_key IS NOT NULL;

-- A message that may leave outside the window names its template and
-- carries the fields that fill it (in clear here, or in `sealed` with
-- the payload keys); content_sid is the approved template the last
-- attempt sent instead of the text (NULL: the text went out).
ALTER TABLE outbox_messages ADD COLUMN template text;
ALTER TABLE outbox_messages ADD COLUMN fields jsonb;
ALTER TABLE outbox_messages ADD COLUMN content_sid text;

-- The tenants' approved WhatsApp templates (tenants.yaml
-- whatsapp_templates), per language and message.
ALTER TABLE tenants ADD COLUMN whatsapp_templates jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE tenants DROP COLUMN whatsapp_templates;
ALTER TABLE outbox_messages DROP COLUMN content_sid;
ALTER TABLE outbox_messages DROP COLUMN fields;
ALTER TABLE outbox_messages DROP COLUMN template;
DROP INDEX inbox_events_window;
ALTER TABLE inbox_events DROP COLUMN customer_key;
