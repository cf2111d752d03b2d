-- 014: a state's jobs in job_id order, for the first page of a state (GET /v1/jobs?state=
-- and the console: JobAdmin::list with at_most). Done jobs stay (until their user is
-- erased), so they only grow; through jobs_due (state, next_attempt_at) a page read and
-- sorted every job of the state (docs/decisions/053-a-look-reads-what-it-finds.md).
CREATE INDEX jobs_state ON jobs (state, job_id);
