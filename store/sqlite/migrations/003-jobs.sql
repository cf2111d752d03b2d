-- 003: follow-up jobs. Operational state, not derived: `rebuild` keeps it.

-- jobs: the persistent queue of fetches the webhooks point at.
CREATE TABLE jobs (
  job_id          INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL CHECK (kind IN ('workout_stream', 'backfill')),
  job_key         TEXT NOT NULL,     -- workout_stream: the workout id; backfill: user/resource/provider/start/end
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
CREATE INDEX jobs_due ON jobs (state, next_attempt_at);
