-- 016: where body retention's walk through the inbox stands (store/body_retention.h).
--
-- The walk removes bodies in seq order and stops at the first delivery too new. Until now
-- it found its place again as the last removed body that had bytes; but a delivery stored
-- after newer ones (an old capture replayed into a database in use, a clock set back) is
-- now removed beyond that place by the late sweep, which would move the walk past the
-- newer deliveries it has not removed yet. So the walk keeps its place here: every applied
-- delivery up to `walked_seq` has had its body removed or recorded. No row: the walk starts
-- after the last removed body that had bytes, as before (a database from before 016 has
-- no late removals).
CREATE TABLE retention_walk (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  walked_seq  INTEGER NOT NULL
) STRICT;
