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
-- SQLite cannot change a CHECK in place: the table is rebuilt with the user column of
-- migration 009, its index, and the view that reads it (dropped first: a table a view
-- names cannot be renamed into place while the view is broken).
DROP VIEW unattributed_rows;
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
  user_id         TEXT,              -- whom the job fetches for (migration 009)
  UNIQUE (kind, job_key)
) STRICT;
INSERT INTO jobs_011 (job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload,
                      created_at, updated_at, user_id)
  SELECT job_id, kind, job_key, state, attempts, next_attempt_at, last_error, trigger_seq, payload, created_at,
         updated_at, user_id FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_011 RENAME TO jobs;
CREATE INDEX jobs_due ON jobs (state, next_attempt_at);
CREATE INDEX jobs_user ON jobs (user_id);
CREATE VIEW unattributed_rows AS
  SELECT table_name, unattributed FROM (
    SELECT 'inbox' AS table_name, count(*) AS unattributed FROM delivery_outcomes AS o
      WHERE o.user_id IS NULL AND o.status = 'processed' AND o.family <> 'fetched_providers'
        AND o.seq IN (SELECT seq FROM removed_bodies)
    UNION ALL SELECT 'summaries', count(*) FROM summaries WHERE user_id IS NULL
    UNION ALL SELECT 'workout_streams', count(*) FROM workout_streams WHERE user_id IS NULL
    UNION ALL SELECT 'devices', count(*) FROM devices WHERE user_id IS NULL
    UNION ALL SELECT 'lab_orders', count(*) FROM lab_orders WHERE user_id IS NULL
    UNION ALL SELECT 'lab_appointments', count(*) FROM lab_appointments WHERE user_id IS NULL
    UNION ALL SELECT 'lab_results', count(*) FROM lab_results WHERE user_id IS NULL
    UNION ALL SELECT 'lab_parsing_jobs', count(*) FROM lab_parsing_jobs WHERE user_id IS NULL
    UNION ALL SELECT 'jobs', count(*) FROM jobs WHERE user_id IS NULL
    UNION ALL SELECT 'changes', count(*) FROM changes WHERE user_id IS NULL AND table_name <> 'providers'
  ) AS counted WHERE unattributed > 0;
