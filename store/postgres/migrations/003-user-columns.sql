-- 003: every table that holds a user's data names the user in a column (spec §11): the
-- SQLite migration 009-user-columns.sql, which says what each column holds, how existing
-- rows are filled and what `unattributed_rows` counts. hh_json_or_null (002) reads the
-- bodies and payloads that may not be JSON.
--
-- Cost: the fill reads every body of the inbox once, in the migration's transaction (other
-- instances wait for it at their start).

ALTER TABLE delivery_outcomes ADD COLUMN user_id text;
ALTER TABLE removed_bodies ADD COLUMN user_id text;
ALTER TABLE lab_parsing_jobs ADD COLUMN user_id text;
ALTER TABLE changes ADD COLUMN user_id text;
ALTER TABLE jobs ADD COLUMN user_id text;

-- A JSON string member of `doc` as text, NULL when it is not a non-empty string (this
-- session's only; dropped again below).
CREATE OR REPLACE FUNCTION pg_temp.hh_user_of(doc jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN jsonb_typeof(doc) = 'string' THEN nullif(doc #>> '{}', '') END
$$;

UPDATE delivery_outcomes AS o SET user_id = CASE
    WHEN i.origin = 'fetch' THEN pg_temp.hh_user_of(hh_json_or_null(i.headers)->'user_id')
    ELSE coalesce(pg_temp.hh_user_of(d.doc->'user_id'), pg_temp.hh_user_of(d.doc->'data'->'user_id'))
  END
FROM inbox AS i CROSS JOIN LATERAL (SELECT CASE WHEN i.origin = 'fetch' THEN NULL ELSE hh_json_or_null(i.body) END AS doc) AS d
WHERE i.seq = o.seq;

UPDATE delivery_outcomes SET user_id = (
  SELECT co.user_id FROM changes AS c JOIN change_owners AS co USING (change_id)
  WHERE c.seq = delivery_outcomes.seq AND co.user_id IS NOT NULL AND co.user_id <> '' LIMIT 1)
WHERE user_id IS NULL AND seq IN (SELECT seq FROM removed_bodies);

UPDATE removed_bodies SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = removed_bodies.seq);

UPDATE lab_parsing_jobs SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = lab_parsing_jobs.seq);

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

UPDATE jobs SET user_id = coalesce(pg_temp.hh_user_of(hh_json_or_null(payload)->'user_id'),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = jobs.trigger_seq));

UPDATE workout_streams SET user_id = coalesce(
  (SELECT j.user_id FROM jobs AS j WHERE j.kind = 'workout_stream' AND j.job_key = workout_streams.workout_id),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = workout_streams.fetched_seq),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = workout_streams.notice_seq))
WHERE user_id IS NULL;

UPDATE changes SET user_id = coalesce(
  (SELECT nullif(co.user_id, '') FROM change_owners AS co WHERE co.change_id = changes.change_id),
  (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = changes.seq))
WHERE table_name <> 'providers';

UPDATE outbox SET user_id = (SELECT o.user_id FROM delivery_outcomes AS o WHERE o.seq = outbox.seq)
WHERE user_id IS NULL;

DROP FUNCTION pg_temp.hh_user_of(jsonb);

CREATE OR REPLACE VIEW change_owners AS
  SELECT c.change_id,
    coalesce(c.user_id, CASE c.table_name
      WHEN 'samples' THEN split_part(c.row_key, '/', 1)
      WHEN 'connections' THEN split_part(c.row_key, '/', 1)
      WHEN 'backfills' THEN split_part(c.row_key, '/', 1)
      WHEN 'users' THEN c.row_key
      WHEN 'summaries' THEN (SELECT s.user_id FROM summaries AS s
                             WHERE s.resource = split_part(c.row_key, '/', 1)
                               AND s.id = substr(c.row_key, strpos(c.row_key, '/') + 1))
      WHEN 'workout_streams' THEN (SELECT w.user_id FROM workout_streams AS w WHERE w.workout_id = c.row_key)
      WHEN 'stream_points' THEN (SELECT w.user_id FROM workout_streams AS w WHERE w.workout_id = c.row_key)
      WHEN 'devices' THEN (SELECT d.user_id FROM devices AS d WHERE d.id = c.row_key)
      WHEN 'lab_orders' THEN (SELECT o.user_id FROM lab_orders AS o WHERE o.id = c.row_key)
      WHEN 'lab_appointments' THEN (SELECT a.user_id FROM lab_appointments AS a WHERE a.id = c.row_key)
      WHEN 'lab_results' THEN (SELECT r.user_id FROM lab_results AS r WHERE r.order_id = c.row_key)
      WHEN 'lab_parsing_jobs' THEN (SELECT p.user_id FROM lab_parsing_jobs AS p WHERE p.id = c.row_key)
    END) AS user_id,
    CASE c.table_name
      WHEN 'samples' THEN split_part(c.row_key, '/', 2)
      WHEN 'backfills' THEN split_part(c.row_key, '/', 2)
      WHEN 'summaries' THEN split_part(c.row_key, '/', 1)
      WHEN 'stream_points' THEN 'workout_streams'
      ELSE c.table_name
    END AS resource
  FROM changes AS c;

CREATE INDEX lab_parsing_jobs_user ON lab_parsing_jobs (user_id);
CREATE INDEX workout_streams_user ON workout_streams (user_id);
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
