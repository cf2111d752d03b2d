-- 018: an unfinished rebuild is recorded (store/unfinished_rebuild.h).
--
-- `rebuild` empties the derived tables and applies the inbox again from the first
-- delivery. Killed in between, it left empty or partly filled tables behind while every
-- delivery kept its outcome ('processed'), and nothing said the tables were incomplete.
-- rebuild_through: the newest inbox seq when a reset emptied the tables; the step that
-- applies it again sets it back to NULL, in the same transaction. NULL: the tables are
-- whole (up to applied_seq, as always).
ALTER TABLE processor_state ADD COLUMN rebuild_through INTEGER;
