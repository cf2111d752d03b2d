-- 006: a record of every erasure (`healthhook purge-user`, spec §11): who, when, and how
-- many rows each table lost. Never any health data: no bodies, values or keys other than
-- the user id.
--
-- Why the user id is kept as is, not hashed: it is the service's pseudonymous id for the
-- person (a random UUID, not a name, e-mail or the customer's own client_user_id, which is
-- not kept), the service itself keeps it, and the record exists to answer "was this
-- person erased, and when?" for that id: a hash of a UUID would be just as linkable to
-- anyone holding the id, so it would hide nothing and only make the record harder to read.
-- The erasure removes the user's rows from every other table (tests/derived/
-- purge_user_test.cpp checks that each table with a user column is covered; this one is
-- the exception by design).
CREATE TABLE erasures (
  erasure_id   INTEGER PRIMARY KEY,
  user_id      TEXT NOT NULL,     -- the erased user: the service's user id, as given to purge-user
  erased_at_ms INTEGER NOT NULL,  -- when the erasure finished (Unix ms, UTC)
  row_counts   TEXT NOT NULL      -- JSON object {table: rows removed}, every table covered, zeros included
) STRICT;
CREATE INDEX erasures_user ON erasures (user_id);
