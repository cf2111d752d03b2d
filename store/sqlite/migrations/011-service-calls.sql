-- 011: what issue 47 (the rest of the service's interface) keeps: a connection's
-- deregistration, a follow-up job kind for lab report parsing results, and the optional
-- App ID of a source context. Existing rows get NULL; `healthhook rebuild` fills the
-- App ID of what was applied before from the inbox.

-- connections.deregistered_at: when `healthhook user deregister` recorded that the service
-- deregistered the user from the provider (Unix ms; status is then 'deregistered'). A
-- later provider.connection.* event replaces the row and clears it.
ALTER TABLE connections ADD COLUMN deregistered_at INTEGER;

-- summaries.app_id, series.app_id: the source context's App ID (source.app_id, or the flat
-- source_app_id), NULL for most sources. A series keeps the latest one a delivery named.
ALTER TABLE summaries ADD COLUMN app_id TEXT;
ALTER TABLE series ADD COLUMN app_id TEXT;

-- jobs: kind 'parsing_job' (a completed lab report parsing job whose webhook carried no
-- results; job_key = the job's id). SQLite cannot change a CHECK constraint in place, so
-- the table is copied into one with the new constraint (jobs has no views, triggers or
-- foreign keys), keeping every row and its job_id.
CREATE TABLE jobs_011 (
  job_id          INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL CHECK (kind IN ('workout_stream', 'backfill', 'parsing_job')),
  job_key         TEXT NOT NULL,     -- workout_stream: the workout id; backfill: user/resource/provider/start/end; parsing_job: the job id
  state           TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'dead')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,  -- Unix ms: not before this
  last_error      TEXT,
  trigger_seq     INTEGER NOT NULL,  -- the delivery that (re)queued it; a higher one re-queues a done job
  payload         TEXT NOT NULL,     -- JSON: what to fetch (ids, window, cursor reached so far)
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (kind, job_key)
) STRICT;
INSERT INTO jobs_011 (job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload,
                      created_at, updated_at)
  SELECT job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, created_at,
         updated_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_011 RENAME TO jobs;
CREATE INDEX jobs_due ON jobs (state, next_attempt_at);
