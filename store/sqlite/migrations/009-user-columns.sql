-- 009: every table that holds a user's data names the user in a column (spec §11), so
-- `healthhook purge-user` finds their rows by that column and never through a body that
-- retention may already have removed (docs/decisions/034-erasure-by-user-columns.md).
--
-- New columns (NULL: the row names nobody, or its user could not be told):
--   delivery_outcomes.user_id  whom the delivery names: a webhook's $.user_id, else its
--                              $.data.user_id; a fetched row's context user_id. Written
--                              by the processor with the outcome (an inbox row pending
--                              processing still has its body: erasure reads those).
--   removed_bodies.user_id     copied from the outcome when retention removes the body.
--   lab_parsing_jobs.user_id   the envelope's user_id (the job's data names nobody).
--   changes.user_id            whom the changed row is about (NULL for providers).
--   jobs.user_id               whom the job fetches for.
-- And indexes where erasure looks rows up by user in a table that is not per delivery.
-- The per-delivery tables (delivery_outcomes, removed_bodies, changes) and the outbox get
-- no index: an index would cost every processor step, a purge reads them once.
--
-- Existing rows are filled from what the store still has: the bodies (and fetch contexts)
-- still in the inbox, then for deliveries whose body retention had already removed, the
-- derived rows they wrote (through the change feed and change_owners). What is left
-- without a user is counted by the view `unattributed_rows` below; healthhook logs it
-- after this migration and `purge-user` prints it (docs/erasure-and-retention.md, "Erasing a user").
--
-- Cost: the fill reads every body of the inbox once (SQLite's JSON functions), in the
-- migration's transaction: about a minute per ten GB of bodies.

ALTER TABLE delivery_outcomes ADD COLUMN user_id TEXT;
ALTER TABLE removed_bodies ADD COLUMN user_id TEXT;
ALTER TABLE lab_parsing_jobs ADD COLUMN user_id TEXT;
ALTER TABLE changes ADD COLUMN user_id TEXT;
ALTER TABLE jobs ADD COLUMN user_id TEXT;

-- A webhook's user: $.user_id (a non-empty string), else $.data.user_id; a fetched row's:
-- its context's user_id (events/delivery_user.h reads the same places).
UPDATE delivery_outcomes SET user_id = (
  SELECT CASE
    WHEN i.origin = 'fetch' THEN
      CASE WHEN json_valid(i.headers) AND json_type(i.headers, '$.user_id') = 'text'
           THEN nullif(json_extract(i.headers, '$.user_id'), '') END
    WHEN json_valid(CAST(i.body AS TEXT)) THEN coalesce(
      CASE WHEN json_type(CAST(i.body AS TEXT), '$.user_id') = 'text'
           THEN nullif(json_extract(CAST(i.body AS TEXT), '$.user_id'), '') END,
      CASE WHEN json_type(CAST(i.body AS TEXT), '$.data.user_id') = 'text'
           THEN nullif(json_extract(CAST(i.body AS TEXT), '$.data.user_id'), '') END)
  END
  FROM inbox AS i WHERE i.seq = delivery_outcomes.seq);

-- Deliveries whose body is gone: the user of a change-feed row they caused.
UPDATE delivery_outcomes SET user_id = (
  SELECT co.user_id FROM changes AS c JOIN change_owners AS co USING (change_id)
  WHERE c.seq = delivery_outcomes.seq AND co.user_id IS NOT NULL AND co.user_id <> '' LIMIT 1)
WHERE user_id IS NULL AND seq IN (SELECT seq FROM removed_bodies);

UPDATE removed_bodies SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = removed_bodies.seq);

UPDATE lab_parsing_jobs SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = lab_parsing_jobs.seq);

-- Rows with a user column that was left empty: the user of the delivery that wrote them.
UPDATE summaries SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = summaries.seq)
WHERE user_id IS NULL;
UPDATE devices SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = devices.seq)
WHERE user_id IS NULL;
UPDATE lab_orders SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = lab_orders.seq)
WHERE user_id IS NULL;
UPDATE lab_appointments SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = lab_appointments.seq)
WHERE user_id IS NULL;
UPDATE lab_results SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = lab_results.seq)
WHERE user_id IS NULL;

-- A job's payload names its user (store/jobs/claimed_job.h), else the delivery that queued it.
UPDATE jobs SET user_id = coalesce(
  CASE WHEN json_valid(payload) AND json_type(payload, '$.user_id') = 'text'
       THEN nullif(json_extract(payload, '$.user_id'), '') END,
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = jobs.trigger_seq));

-- A stream fetched without a notice: the user of the job that fetched it, else of the
-- deliveries that wrote the row.
UPDATE workout_streams SET user_id = coalesce(
  (SELECT j.user_id FROM jobs AS j WHERE j.kind = 'workout_stream' AND j.job_key = workout_streams.workout_id),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = workout_streams.fetched_seq),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = workout_streams.notice_seq))
WHERE user_id IS NULL;

-- The feed: whom the row is about (change_owners, 008), else the delivery's user; the
-- provider list names nobody.
UPDATE changes SET user_id = coalesce(
  (SELECT nullif(co.user_id, '') FROM change_owners AS co WHERE co.change_id = changes.change_id),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = changes.seq))
WHERE table_name <> 'providers';

-- Forwards not sent yet whose user was not known when they were written.
UPDATE outbox SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = outbox.seq)
WHERE user_id IS NULL;

-- change_owners (008): the feed's own column first.
DROP VIEW change_owners;
CREATE VIEW change_owners AS
  SELECT c.change_id,
    coalesce(c.user_id, CASE c.table_name
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
      WHEN 'lab_parsing_jobs' THEN (SELECT p.user_id FROM lab_parsing_jobs AS p WHERE p.id = c.row_key)
    END) AS user_id,
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

CREATE INDEX lab_parsing_jobs_user ON lab_parsing_jobs (user_id);
CREATE INDEX workout_streams_user ON workout_streams (user_id);
CREATE INDEX jobs_user ON jobs (user_id);

-- unattributed_rows: rows that hold a user's data but name no user, per table (tables
-- with none are left out). Filled databases should have none; rows written before this
-- migration whose user was only in a body that retention had removed stay here, and
-- `purge-user` cannot find them (it says so). Deliveries: applied ones of a kind that
-- always names a user (not a provider list), body removed, user unknown.
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
