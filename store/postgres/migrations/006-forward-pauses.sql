-- 006: destinations an operator paused (SQLite's 012-forward-pauses.sql; store/outbox.h).
CREATE TABLE forward_pauses (
  destination text PRIMARY KEY,
  paused_at   bigint NOT NULL
);
