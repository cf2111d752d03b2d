-- 008: processing shared by sessions, one group of users each (docs/decisions/050:
-- processing in shards by user). Latest-wins rules are per user, so the deliveries of
-- users in different shards can be applied at once, by different instances.
--
-- inbox.shard: which of 16 shards the row's user is in (store/postgres/processing_shards.h
-- computes it; the writer stores it). NULL means "not assigned": rows stored before this
-- migration, rows `healthhook migrate` copies, rows an instance of the previous version
-- stores during a rolling upgrade. Sessions read NULL rows too and compute their shard
-- from the body, so no fill is needed here: the migration only adds a column without a
-- default (no table rewrite), and gives up after 10 s rather than queue every instance's
-- inserts behind a long reader of the inbox (the instance fails to start and is restarted).
SET LOCAL lock_timeout = '10s';
ALTER TABLE inbox ADD COLUMN shard bigint;

-- Each shard's applied position: every delivery of the shard up to it is applied. The
-- session that owns a shard (a session advisory lock) moves it with each step, and then
-- processor_state.applied_seq to the lowest shard position, so that it keeps meaning
-- "everything up to it is applied" (to an instance of the previous version too, which
-- reads and writes only processor_state: a shard's position is the greater of the two).
CREATE TABLE processor_shards (
  shard       bigint PRIMARY KEY CHECK (shard BETWEEN 0 AND 15),
  applied_seq bigint NOT NULL
);
INSERT INTO processor_shards (shard, applied_seq)
SELECT s, (SELECT applied_seq FROM processor_state WHERE id = 1) FROM generate_series(0, 15) AS s;

-- Every delivery up to it is applied, whichever shard it is in: what the change feed,
-- retention and the lag figure are bounded by.
CREATE FUNCTION hh_processed_seq() RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT greatest((SELECT min(applied_seq) FROM processor_shards),
                  (SELECT applied_seq FROM processor_state WHERE id = 1))
$$;
