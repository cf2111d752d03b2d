-- 012: what a changes-mode POST carried, kept with its entries (SQLite's
-- 017-outbox-content.sql says why).
ALTER TABLE outbox ADD COLUMN content text;
ALTER TABLE outbox ADD COLUMN content_bytes bigint;
