-- 007: samples.series_id no longer checked against series on every row (decision 046).
-- SQLite never enforced it (its foreign keys are off, the default), so this is the same
-- schema on both backends. The derived writer inserts a series before its first sample,
-- and purge-user erases samples before series (store/schema/: the erasure order), so the
-- check guarded nothing the store does; on PostgreSQL it cost one lookup and row lock in
-- series for each of a 20 KiB delivery's 180 samples (about a third of applying it).
-- Every foreign key of samples, whatever its name (a database restored by hand may have
-- named it otherwise): none may be left behind with version 7 recorded.
DO $$
DECLARE
  reference text;
BEGIN
  FOR reference IN
    SELECT conname FROM pg_constraint WHERE conrelid = 'samples'::regclass AND contype = 'f'
  LOOP
    EXECUTE format('ALTER TABLE samples DROP CONSTRAINT %I', reference);
  END LOOP;
END $$;
