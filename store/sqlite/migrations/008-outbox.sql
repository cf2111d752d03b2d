-- 008: the forwarding outbox (spec §10, store/outbox.h). One row per message still to be
-- pushed to a [[forward]] destination, written in the same transaction as what it
-- describes: a processor step's change-feed rows (changes mode) or an ingest commit's
-- deliveries (deliveries mode). Sent rows are deleted; AUTOINCREMENT so an id is never
-- handed out twice (the backend deduplicates on message ids built from it).
CREATE TABLE outbox (
  outbox_id       INTEGER PRIMARY KEY AUTOINCREMENT,
  destination     TEXT NOT NULL,     -- the [[forward]] name
  kind            TEXT NOT NULL,     -- 'change' or 'delivery'
  seq             INTEGER NOT NULL,  -- the delivery (that caused the change)
  event_type      TEXT,              -- the delivery's event_type
  table_name      TEXT NOT NULL,     -- change: the change-feed row's table; delivery: 'deliveries'
  row_key         TEXT NOT NULL,     -- change: its row_key; delivery: the message id
  op              TEXT NOT NULL,     -- change: insert, update, replace; delivery: 'insert'
  row_count       INTEGER NOT NULL DEFAULT 1,
  from_ms         INTEGER,           -- samples: the time range of the change
  to_ms           INTEGER,
  user_id         TEXT,              -- whom it is about, when known
  order_key       TEXT,              -- user/resource; one key's rows go out in outbox_id order
  state           TEXT NOT NULL DEFAULT 'pending',  -- pending, dead, dropped
  attempts        INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,  -- Unix ms, UTC
  next_attempt_at INTEGER NOT NULL,  -- Unix ms, UTC
  batch_id        INTEGER,           -- the POST it failed in (that POST's first outbox_id): retried together (010: post_id, the POST it went out in)
  last_status     INTEGER,           -- HTTP status of the last attempt; NULL: no answer
  last_error      TEXT
) STRICT;
-- The sender's walk over one destination's pending rows, and `forward list`.
CREATE INDEX outbox_destination ON outbox (destination, state, outbox_id);

-- change_owners: whom each change-feed row is about (user_id) and its resource, for the
-- order key of forwarded changes. Keys follow 002-derived.sql: samples
-- "user/resource/provider/source_type", summaries "resource/id", connections
-- "user/provider", backfills "user/resource/provider/start_ms/end_ms", users "user";
-- the other tables are keyed by their own id and name their user in a column. The
-- resource is the table's name where the key has none.
CREATE VIEW change_owners AS
  SELECT c.change_id,
    CASE c.table_name
      WHEN 'samples' THEN substr(c.row_key, 1, instr(c.row_key, '/') - 1)
      WHEN 'connections' THEN substr(c.row_key, 1, instr(c.row_key, '/') - 1)
      WHEN 'backfills' THEN substr(c.row_key, 1, instr(c.row_key, '/') - 1)
      WHEN 'users' THEN c.row_key
      WHEN 'summaries' THEN (SELECT s.user_id FROM summaries AS s
                             WHERE s.resource = substr(c.row_key, 1, instr(c.row_key, '/') - 1)
                               AND s.id = substr(c.row_key, instr(c.row_key, '/') + 1))
      WHEN 'workout_streams' THEN (SELECT w.user_id FROM workout_streams AS w WHERE w.workout_id = c.row_key)
      WHEN 'stream_points' THEN (SELECT w.user_id FROM workout_streams AS w WHERE w.workout_id = c.row_key)
      WHEN 'devices' THEN (SELECT d.user_id FROM devices AS d WHERE d.id = c.row_key)
      WHEN 'lab_orders' THEN (SELECT o.user_id FROM lab_orders AS o WHERE o.id = c.row_key)
      WHEN 'lab_appointments' THEN (SELECT a.user_id FROM lab_appointments AS a WHERE a.id = c.row_key)
      WHEN 'lab_results' THEN (SELECT r.user_id FROM lab_results AS r WHERE r.order_id = c.row_key)
    END AS user_id,
    CASE c.table_name
      WHEN 'samples' THEN substr(substr(c.row_key, instr(c.row_key, '/') + 1), 1,
                                 instr(substr(c.row_key, instr(c.row_key, '/') + 1), '/') - 1)
      WHEN 'backfills' THEN substr(substr(c.row_key, instr(c.row_key, '/') + 1), 1,
                                   instr(substr(c.row_key, instr(c.row_key, '/') + 1), '/') - 1)
      WHEN 'summaries' THEN substr(c.row_key, 1, instr(c.row_key, '/') - 1)
      WHEN 'stream_points' THEN 'workout_streams'
      ELSE c.table_name
    END AS resource
  FROM changes AS c;
