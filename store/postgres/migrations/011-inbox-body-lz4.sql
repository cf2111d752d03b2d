-- 011: inbox bodies compressed with lz4 instead of PostgreSQL's default pglz (decision 061).
-- A body over about 2 KB (a 20 KiB timeseries batch, a fetched page) is compressed when it
-- is stored; pglz was a tenth of the database server's CPU per 20 KiB delivery, lz4 costs
-- a fraction of that for a little less compression. Only the column's setting changes:
-- bodies stored before keep pglz and read as before. A server built without lz4 (or older
-- than 14, which has no per-column setting) keeps pglz: EXECUTE defers parsing the
-- statement so that its error, too, is caught here.
SET LOCAL lock_timeout = '10s';
DO $$
BEGIN
  EXECUTE 'ALTER TABLE inbox ALTER COLUMN body SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
  NULL;  -- stays pglz (docs/postgresql.md)
END $$;
