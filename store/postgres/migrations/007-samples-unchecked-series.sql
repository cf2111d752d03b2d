-- 007: samples.series_id no longer checked against series on every row (decision 046).
-- SQLite never enforced it (its foreign keys are off, the default), so this is the same
-- schema on both backends. The derived writer inserts a series before its first sample,
-- and purge-user erases samples before series (store/schema/: the erasure order), so the
-- check guarded nothing the store does; on PostgreSQL it cost one lookup and row lock in
-- series for each of a 20 KiB delivery's 180 samples (about a third of applying it).
ALTER TABLE samples DROP CONSTRAINT IF EXISTS samples_series_id_fkey;
