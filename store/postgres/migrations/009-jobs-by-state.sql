-- 009: a state's jobs in job_id order (SQLite's 014-jobs-by-state.sql says why).
-- Before 010's index on outbox, in the order a processing step takes the two tables (jobs,
-- then outbox): an instance of the previous version still applying deliveries waits for
-- this migration's builds instead of deadlocking with it (docs/operations.md: a build
-- holds writes to its table until the migration commits).
SET LOCAL lock_timeout = '10s';
CREATE INDEX jobs_state ON jobs (state, job_id);
