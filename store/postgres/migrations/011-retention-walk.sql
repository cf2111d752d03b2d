-- 011: where body retention's walk through the inbox stands (SQLite's
-- 016-retention-walk.sql says why). No row: the walk starts after the last removed body
-- that had bytes, as before.
CREATE TABLE retention_walk (
  id          bigint PRIMARY KEY CHECK (id = 1),
  walked_seq  bigint NOT NULL
);
