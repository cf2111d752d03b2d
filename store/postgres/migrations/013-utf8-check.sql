-- 013: hh_is_utf8, whether a body is UTF-8. hh_json_or_null(bytea) reads a body that is
-- not UTF-8 as Latin-1 (as SQLite's json_valid takes its bytes), which is right for whom
-- a delivery names, but such a body is no JSON a backend's handler could take: push
-- forwarding in deliveries mode makes no entry for it (store/postgres/outbox/, as SQLite's
-- hh_json_text does; a NUL byte is no UTF-8 to convert_from either). The exception block writes nothing (002 says why that matters).
CREATE OR REPLACE FUNCTION hh_is_utf8(doc bytea) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  PERFORM convert_from(doc, 'UTF8');
  RETURN true;
EXCEPTION WHEN data_exception THEN
  RETURN false;
END
$$;
