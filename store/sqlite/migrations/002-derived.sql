-- 002: tables derived from the inbox by the processor. `healthhook rebuild` empties them
-- and re-applies the inbox in seq order; the result equals what the live processor built.
-- Every row carries `seq`: the delivery that last wrote it. A row is replaced only by a
-- delivery with a higher seq ("latest wins", in order of receipt).
-- Times are Unix milliseconds UTC (*_ms); text times are kept as sent where noted.

-- summaries: one row per (resource, summary id): activity, sleep, sleep_cycle, workouts,
-- body, meal, profile, menstrual_cycle, electrocardiogram, and any other summary resource.
CREATE TABLE summaries (
  resource      TEXT NOT NULL,     -- from the event type: daily.data.<resource>.*
  id            TEXT NOT NULL,     -- $.data.id
  user_id       TEXT,              -- $.data.user_id, else the envelope's user_id
  provider      TEXT,              -- source.provider, else legacy source.slug, else flat source_provider
  source_type   TEXT NOT NULL,     -- source.type, else flat source_type, else 'unknown'
  calendar_date TEXT,              -- $.data.calendar_date as sent (YYYY-MM-DD), NULL when absent
  start_ms      INTEGER,           -- start of the period (bedtime_start, time_start, session_start, date...), NULL when absent
  end_ms        INTEGER,           -- end of the period (bedtime_stop, time_end, session_end), NULL when absent
  seq           INTEGER NOT NULL,  -- the delivery this version came from
  data          TEXT NOT NULL,     -- the summary object exactly as received ($.data), unknown fields included
  PRIMARY KEY (resource, id)
) STRICT;
CREATE INDEX summaries_user_time ON summaries (user_id, resource, calendar_date);

-- series: the four text parts of a sample key, stored once (samples refer to them by id).
CREATE TABLE series (
  series_id   INTEGER PRIMARY KEY,
  user_id     TEXT NOT NULL,
  resource    TEXT NOT NULL,       -- heartrate, steps, glucose, blood_pressure, ...
  provider    TEXT NOT NULL,       -- source.provider, else legacy source.slug
  source_type TEXT NOT NULL,       -- source.type, default 'unknown'
  UNIQUE (user_id, resource, provider, source_type)
) STRICT;

-- samples: one row per (series, instant): the latest value received for that key.
CREATE TABLE samples (
  series_id       INTEGER NOT NULL REFERENCES series (series_id),
  t_ms            INTEGER NOT NULL,  -- the sample's timestamp (interval samples: start) as a UTC instant
  timezone_offset INTEGER,           -- seconds east of UTC, as sent; NULL when absent
  value           ANY,               -- the value as sent (a number; text kept as text); NULL for blood_pressure
  unit            TEXT,
  type            TEXT,              -- reading type (cholesterol, ige, igg), lead (electrocardiogram_voltage); mostly NULL
  start_ms        INTEGER,           -- interval samples: [start, end)
  end_ms          INTEGER,
  systolic        REAL,              -- blood_pressure only
  diastolic       REAL,              -- blood_pressure only
  extra           TEXT,              -- every other sample field, as a JSON object; NULL when there are none
  seq             INTEGER NOT NULL,
  PRIMARY KEY (series_id, t_ms)
) STRICT, WITHOUT ROWID;

-- samples_named: samples with the series names joined back, for readers.
CREATE VIEW samples_named AS
  SELECT s.user_id, s.resource, s.provider, s.source_type, p.t_ms, p.timezone_offset, p.value, p.unit, p.type,
         p.start_ms, p.end_ms, p.systolic, p.diastolic, p.extra, p.seq
  FROM samples p JOIN series s USING (series_id);

-- workout_streams: one row per workout announced by daily.data.workout_stream.* (the
-- event is shallow; the points are fetched by a follow-up job).
CREATE TABLE workout_streams (
  workout_id   TEXT PRIMARY KEY,
  user_id      TEXT,
  provider     TEXT,
  provider_id  TEXT,                -- the provider's own workout id
  sport        TEXT,                -- sport.slug (sport.id is unstable across environments)
  notice_seq   INTEGER,             -- the latest notice for this workout; NULL when the stream was fetched
                                    -- without one (a workouts page of a backfill queued the fetch)
  fetched_seq  INTEGER,             -- the fetched stream the points came from; NULL until fetched
  point_count  INTEGER,             -- points stored from that fetch
  seq          INTEGER NOT NULL     -- max(notice_seq, fetched_seq), NULLs ignored
) STRICT;

-- stream_points: one row per point of a fetched stream; arrays of different lengths
-- and null elements are kept as NULL. A later fetch replaces all points of the workout.
CREATE TABLE stream_points (
  workout_id      TEXT NOT NULL,
  idx             INTEGER NOT NULL,  -- position in the stream's arrays
  time            INTEGER,           -- Unix seconds
  distance        REAL,              -- cumulative metres
  heartrate       REAL,              -- bpm
  velocity_smooth REAL,              -- m/s
  lat             REAL,
  lng             REAL,
  altitude        REAL,
  cadence         REAL,
  power           REAL,              -- watts
  resistance      REAL,
  temperature     REAL,              -- °C
  PRIMARY KEY (workout_id, idx)
) STRICT, WITHOUT ROWID;

-- connections: one row per (user, provider) from provider.connection.created/error.
CREATE TABLE connections (
  user_id               TEXT NOT NULL,
  provider              TEXT NOT NULL,  -- `provider` (slug or object's slug), else legacy `source`
  status                TEXT NOT NULL,  -- 'connected' (created) or 'error'
  external_user_id      TEXT,
  error_type            TEXT,           -- non-exhaustive enum, stored as sent
  error_message         TEXT,
  resource_availability TEXT,           -- JSON object as sent, NULL when absent
  event_type            TEXT NOT NULL,  -- the event that wrote this version
  seq                   INTEGER NOT NULL,
  data                  TEXT NOT NULL,  -- $.data as received
  PRIMARY KEY (user_id, provider)
) STRICT;

-- devices: one row per device id from provider.device.*.
CREATE TABLE devices (
  id                  TEXT PRIMARY KEY,
  user_id             TEXT,
  provider            TEXT,
  source_type         TEXT,
  app_id              TEXT,
  device_manufacturer TEXT,
  device_model        TEXT,
  device_version      TEXT,
  device_id           TEXT,
  seq                 INTEGER NOT NULL,
  data                TEXT NOT NULL
) STRICT;

-- lab_orders: one row per order id from labtest.order.*.
CREATE TABLE lab_orders (
  id                TEXT PRIMARY KEY,
  user_id           TEXT,
  team_id           TEXT,
  status            TEXT,           -- deprecated top-level status, as sent
  last_event_status TEXT,           -- last_event.status (else the last item of events[]): {top}.{method}.{low}
  status_detail     TEXT,           -- last_event.status_detail
  interpretation    TEXT,
  seq               INTEGER NOT NULL,
  data              TEXT NOT NULL
) STRICT;

-- lab_appointments: one row per appointment id from labtest.appointment.*.
CREATE TABLE lab_appointments (
  id           TEXT PRIMARY KEY,
  order_id     TEXT,
  user_id      TEXT,
  status       TEXT,
  event_status TEXT,
  start_at     TEXT,               -- as sent
  end_at       TEXT,
  seq          INTEGER NOT NULL,
  data         TEXT NOT NULL
) STRICT;

-- lab_results: one row per order id from labtest.result.critical.
CREATE TABLE lab_results (
  order_id       TEXT PRIMARY KEY,
  user_id        TEXT,
  sample_id      TEXT,
  status         TEXT,             -- final | partial (non-exhaustive)
  interpretation TEXT,
  seq            INTEGER NOT NULL,
  data           TEXT NOT NULL
) STRICT;

-- lab_parsing_jobs: one row per job id from lab_report.parsing_job.*.
CREATE TABLE lab_parsing_jobs (
  id                 TEXT PRIMARY KEY,
  status             TEXT,          -- upload_pending | started | completed | failed (non-exhaustive)
  failure_reason     TEXT,
  needs_human_review INTEGER,       -- 0/1, NULL when absent
  is_reviewed        INTEGER,
  results            TEXT,          -- $.data.data as JSON when present (completed jobs), else NULL
  seq                INTEGER NOT NULL,
  data               TEXT NOT NULL
) STRICT;

-- backfills: one row per historical.data.<resource>.created notice (a window to fetch).
CREATE TABLE backfills (
  user_id   TEXT NOT NULL,
  resource  TEXT NOT NULL,
  provider  TEXT NOT NULL,
  start_ms  INTEGER NOT NULL,
  end_ms    INTEGER NOT NULL,
  is_final  INTEGER,                -- deprecated flag, NULL when absent
  seq       INTEGER NOT NULL,       -- the notice
  PRIMARY KEY (user_id, resource, provider, start_ms, end_ms)
) STRICT;

-- changes: the change feed. Every insert or replacement of a derived row appends one
-- row here, in the same transaction. Samples and stream points are reported per batch
-- (one change per delivery and series, or per fetched stream) rather than per point,
-- see schemas/README.md.
--   op 'insert': the key was new. op 'update': an existing row was replaced by a later
--   seq. A version older than the stored one (lower seq) writes nothing and no change.
--   samples: ONE row per (delivery, series): row_key "user_id/resource/provider/source_type",
--   row_count = samples inserted or replaced by that delivery (stale ones not counted),
--   from_ms/to_ms = the smallest and largest t_ms among them; op 'insert' when all of them
--   were new, else 'update' (a reader that sees 'insert' may append without looking up).
--   stream_points: one row per fetched stream, row_key = workout_id, op 'replace' (all
--   earlier points of the workout were deleted), row_count = points stored; the
--   workout_streams row it updates (fetched_seq, point_count) gets its own change.
--   Composite keys are joined with '/': summaries "resource/id", connections
--   "user_id/provider", backfills "user_id/resource/provider/start_ms/end_ms"; the others
--   are their single key column. `series` (an id dictionary) and jobs are not reported.
--   Rebuild empties this table too and re-creates the same rows (same change_id, seq).
CREATE TABLE changes (
  change_id  INTEGER PRIMARY KEY,   -- order of the feed
  seq        INTEGER NOT NULL,      -- the delivery that caused the change (the feed's cursor)
  table_name TEXT NOT NULL,         -- summaries, samples, workout_streams, stream_points, connections, ...
  row_key    TEXT NOT NULL,         -- the row's key; for samples: user/resource/provider/source_type
  op         TEXT NOT NULL CHECK (op IN ('insert', 'update', 'replace')),
  row_count  INTEGER NOT NULL DEFAULT 1,  -- rows the change covers (samples, stream points)
  from_ms    INTEGER,               -- samples: time range the change covers
  to_ms      INTEGER
) STRICT;
CREATE INDEX changes_seq ON changes (seq);
