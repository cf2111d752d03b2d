-- 001: the inbox. Every accepted delivery, byte-exact, in order of first receipt.
-- Applied with PRAGMA user_version = 1 in the same transaction.

-- deliveries: the inbox. A row exists only for deliveries that passed the signature
-- check (origin 'webhook') or for responses the follow-up fetcher stored (origin 'fetch').
-- Rows are kept: message ids must be remembered for as long as the service may resend
-- them, and `healthhook rebuild` re-derives every other table from here. (Later versions
-- delete an erased user's rows, `healthhook purge-user`; schemas/tables.md is the column
-- reference.)
CREATE TABLE deliveries (
  seq               INTEGER PRIMARY KEY,  -- strictly increasing in commit order; all latest-wins decisions compare it
  message_id        TEXT NOT NULL,        -- svix-id / webhook-id; fetched rows "fetch:<job id>:<trigger seq>:<page>", "fetch:providers:<ms>"
  origin            TEXT NOT NULL DEFAULT 'webhook' CHECK (origin IN ('webhook', 'fetch')),
  received_at       INTEGER NOT NULL,     -- when the receiver accepted it: Unix milliseconds, UTC
  webhook_timestamp INTEGER,              -- the signed svix-/webhook-timestamp (Unix seconds); NULL for fetched rows
  event_type        TEXT,                 -- $.event_type as read at ingest (NULL when the body had none); fetched rows: "fetch.<kind>.<resource>"
  status            TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'processed', 'invalid', 'ignored', 'unknown')),
  family            TEXT,                 -- what the processor classified it as (summary, timeseries, workout_stream, ...); NULL while pending
  error             TEXT,                 -- why status is 'invalid': names the field and the problem
  headers           TEXT NOT NULL,        -- the request headers as a JSON object {name: value}, names as received
  body              BLOB NOT NULL         -- the raw body, exactly as received (last column: metadata scans skip it)
) STRICT;

-- The dedup check: a message id is accepted once, ever.
CREATE UNIQUE INDEX deliveries_message_id ON deliveries (message_id);
-- capture --since/--until and read-API lookups by time.
CREATE INDEX deliveries_received_at ON deliveries (received_at);

-- processor_state: how far the processor has applied the inbox. Updated in the same
-- transaction as the rows it derived, so a restart neither repeats nor skips a delivery.
CREATE TABLE processor_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  applied_seq INTEGER NOT NULL           -- every delivery with seq <= applied_seq has been applied
) STRICT;
INSERT INTO processor_state (id, applied_seq) VALUES (1, 0);
