-- 007: body retention (spec §11, `[retention] body_days`). The bodies and headers of
-- applied deliveries older than the retention are removed from the inbox in the
-- background; the inbox row stays (seq, message id, received_at, event_type, origin) with
-- its outcome, so a redelivered message id is still refused as a duplicate. What was
-- removed is recorded here, one row per delivery, with a hash of the body that was there.
--
-- Why a table of its own and not columns on `inbox`: a column added to `inbox` would come
-- after `body`, which must stay last (metadata scans skip it), and the table costs nothing
-- until retention runs. The inbox row keeps `headers = '{}'` and `body = x''` (both
-- columns are NOT NULL).
CREATE TABLE removed_bodies (
  seq           INTEGER PRIMARY KEY,  -- the inbox row (inbox.seq) whose body and headers were removed
  body_sha256   TEXT NOT NULL,        -- SHA-256 of the body as received, lower-case hex
  body_bytes    INTEGER NOT NULL,     -- its size
  removed_at_ms INTEGER NOT NULL      -- when it was removed (Unix ms, UTC)
) STRICT;

-- deliveries: as in 004, plus when the body was removed and its hash (NULL while it is
-- there). Columns are appended, so readers by name or position see no change. SQLite
-- leaves the join out of queries that do not read the two columns.
DROP VIEW deliveries;
CREATE VIEW deliveries AS
  SELECT i.seq, i.message_id, i.origin, i.received_at, i.webhook_timestamp, i.event_type,
         coalesce(o.status, 'pending') AS status, o.family, o.error, i.headers, i.body,
         r.removed_at_ms AS body_removed_at, r.body_sha256
  FROM inbox AS i LEFT JOIN delivery_outcomes AS o ON o.seq = i.seq
                  LEFT JOIN removed_bodies AS r ON r.seq = i.seq;
