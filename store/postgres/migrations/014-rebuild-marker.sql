-- 014: an unfinished rebuild is recorded (store/unfinished_rebuild.h; SQLite 018).
--
-- rebuild_through: the newest inbox seq when a reset emptied the derived tables; NULL
-- again once every shard has applied up to it (processor_state.applied_seq, the lowest
-- shard position, reaching it: the step that moves it there, or the catch-up of
-- processor_state a second later, clears it). Only this column is added: no rewrite.
ALTER TABLE processor_state ADD COLUMN rebuild_through bigint;
