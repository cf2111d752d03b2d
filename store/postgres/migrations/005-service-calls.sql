-- 005: SQLite's 011-service-calls.sql on PostgreSQL: connections.deregistered_at,
-- summaries.app_id and series.app_id, and the job kind 'parsing_job'.
ALTER TABLE connections ADD COLUMN deregistered_at bigint;
ALTER TABLE summaries ADD COLUMN app_id text;
ALTER TABLE series ADD COLUMN app_id text;
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('workout_stream', 'backfill', 'parsing_job'));
