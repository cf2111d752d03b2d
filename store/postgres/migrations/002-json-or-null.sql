-- 002: hh_json_or_null, SQLite's json_valid()/json_extract() pair for documents that may
-- not be JSON. PostgreSQL 15 has no IS JSON, and a cast of a bad document fails the whole
-- statement; these return NULL instead, so one bad job payload cannot fail a claim
-- (store/postgres/jobs/pg_job_queue.cpp) and one body that is not JSON (or not UTF-8)
-- cannot fail the ingest commit that writes outbox entries (store/postgres/outbox/).
--
-- The exception block runs the cast in a subtransaction. It writes nothing, so it takes
-- no transaction id of its own (no subxid cache overflow however many rows are read).
-- Caught: data exceptions (bad syntax 22P02, bad UTF-8 22021, \u0000 in jsonb 22P05) and
-- program limits (nesting too deep, 54001); anything else (a cancel, out of memory) still
-- fails the statement.
CREATE FUNCTION hh_json_or_null(doc text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN doc::jsonb;
EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
  RETURN NULL;
END
$$;

-- A body: UTF-8 JSON as it should be. SQLite's json_valid checks the syntax only, bytes
-- that are not UTF-8 inside strings included; so that the same bodies count as JSON here,
-- one that is not UTF-8 is read again as Latin-1 (every byte a character, ASCII
-- unchanged): its syntax is what decides, and its ASCII members read as SQLite reads them.
CREATE FUNCTION hh_json_or_null(doc bytea) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  BEGIN
    RETURN convert_from(doc, 'UTF8')::jsonb;
  EXCEPTION WHEN character_not_in_repertoire THEN
    RETURN convert_from(doc, 'LATIN1')::jsonb;
  END;
EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
  RETURN NULL;
END
$$;
