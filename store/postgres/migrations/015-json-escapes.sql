-- 015: hh_json_or_null(bytea) takes the JSON escapes SQLite's json_valid takes. jsonb
-- refuses a \u0000 escape (22P05: text has no NUL) and a surrogate escape that is not
-- half of a pair (22P02), where json_valid checks four hex digits only: such a body was
-- JSON on SQLite and NULL here, and push forwarding in deliveries mode silently made no
-- entry for it (store/postgres/outbox/; decision 086). When the cast fails, it is tried
-- once more with each such escape made \u0020, every other byte kept: the document is
-- only read for whom it names and whether it is JSON, not forwarded from here.
--
-- An escape is one whose backslash follows an even number of backslashes ("\\u0000" is
-- an escaped backslash and the text u0000). The first pass blanks \u0000 and each high
-- surrogate not followed by a low one: every high one left starts a pair, such as
-- \ud83d\ude00, which is kept. Each pair's low half is marked (\u!de00, no escape JSON
-- has), every low one not marked is blanked, and the marks are taken off again. Only
-- lookbehinds of one character: a longer one costs PostgreSQL a scan back to the start of
-- the text at each place it is tried (minutes for a body of 100,000 lone surrogates).
-- The text overload (job payloads, written by healthhook itself as JSON jsonb reads) is
-- left as it is.
--
-- As 002: the exception blocks write nothing (no transaction id of their own), a data
-- exception or a program limit gives NULL and anything else fails the statement, and a
-- body that is not UTF-8 is read as Latin-1.
CREATE OR REPLACE FUNCTION hh_json_or_null(doc bytea) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  body text;
  blanked text;
BEGIN
  BEGIN
    body := convert_from(doc, 'UTF8');
  EXCEPTION WHEN character_not_in_repertoire THEN
    body := convert_from(doc, 'LATIN1');
  END;
  BEGIN
    RETURN body::jsonb;
  EXCEPTION WHEN data_exception THEN
    blanked := regexp_replace(body,
      '(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F]))', '\1\\u0020', 'g');
    blanked := regexp_replace(blanked,
      '(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})', '\1\2\\u!\3', 'g');
    blanked := regexp_replace(blanked, '(?<!\\)((?:\\\\)*)\\u[dD][c-fC-F][0-9a-fA-F]{2}', '\1\\u0020', 'g');
    blanked := regexp_replace(blanked, '(?<!\\)((?:\\\\)*)\\u!([dD][c-fC-F])', '\1\\u\2', 'g');
  END;
  IF blanked = body THEN
    RETURN NULL;  -- no such escape: the document is not JSON
  END IF;
  RETURN blanked::jsonb;
EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
  RETURN NULL;
END
$$;
