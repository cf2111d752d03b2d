-- 010: a destination's pending and dead entries in outbox_id order, for the disk budget's
-- drops (SQLite's 013-outbox-oldest.sql says why).
SET LOCAL lock_timeout = '10s';
CREATE INDEX outbox_oldest ON outbox (destination, outbox_id) WHERE state IN ('pending', 'dead');
