-- 004: a delivery's processing outcome (status, family, error) moves out of the inbox row
-- into delivery_outcomes; `deliveries` becomes a view with the same columns as before.
--
-- Why: SQLite overwrites a row in place only when the new record has exactly the old
-- size. Setting status/family/error on the inbox row changed its size, so every applied
-- delivery had its whole row rewritten, body and overflow pages included, and then once
-- more through the WAL and the checkpoint (docs/decisions/014-outcomes-table.md). Inbox
-- rows are now written once.
--
-- Readers see no change: SELECT … FROM deliveries returns the same columns, status
-- 'pending' for a row without an outcome. Writers: the receiver appends to `inbox`, the
-- processor upserts `delivery_outcomes`, `rebuild` empties it.
-- Cost on an existing database: DROP COLUMN rewrites the inbox table once.

-- delivery_outcomes: what the processor made of each inbox row it applied.
CREATE TABLE delivery_outcomes (
  seq    INTEGER PRIMARY KEY,  -- the inbox row (inbox.seq); no row here = status 'pending'
  -- Written as an OR chain, not IN (…): for an IN list of more than two constants SQLite
  -- builds a temporary b-tree at every execution of the statement (2.2 µs vs 0.4 µs a row).
  status TEXT NOT NULL CHECK (status = 'processed' OR status = 'invalid' OR status = 'ignored' OR status = 'unknown'),
  family TEXT,               -- what the processor classified it as (summary, timeseries, workout_stream, ...)
  error  TEXT                -- why status is 'invalid': names the field and the problem
) STRICT;
INSERT INTO delivery_outcomes (seq, status, family, error)
  SELECT seq, status, family, error FROM deliveries WHERE status <> 'pending';

-- inbox: the deliveries table of 001 without the outcome columns. Its indexes keep their
-- names (deliveries_message_id, deliveries_received_at); SQLite cannot rename an index
-- without building it again.
ALTER TABLE deliveries RENAME TO inbox;
ALTER TABLE inbox DROP COLUMN status;
ALTER TABLE inbox DROP COLUMN family;
ALTER TABLE inbox DROP COLUMN error;

-- deliveries: the inbox as readers have always seen it (spec §4): seq, message id,
-- received_at, event_type, status, error, headers, raw body.
CREATE VIEW deliveries AS
  SELECT i.seq, i.message_id, i.origin, i.received_at, i.webhook_timestamp, i.event_type,
         coalesce(o.status, 'pending') AS status, o.family, o.error, i.headers, i.body
  FROM inbox AS i LEFT JOIN delivery_outcomes AS o ON o.seq = i.seq;
