-- 010: a state's jobs in job_id order (SQLite's 014-jobs-by-state.sql says why).
SET LOCAL lock_timeout = '10s';
CREATE INDEX jobs_state ON jobs (state, job_id);
