-- 016: an erasure's placeholder row takes a message id no delivery can carry (SQLite 019).
--
-- PostgreSQL's sequence never hands a seq out again, so its erasures leave no placeholder;
-- a store copied from SQLite (`healthhook migrate`) may hold the placeholders SQLite's
-- `purge-user` left, with the id "erased:<seq>", which a delivery may carry too (it was
-- then answered `duplicate` and not stored). They now start with a space, as SQLite's:
-- HTTP trims a header value's edges and replay refuses such an id. A placeholder is told
-- from a delivery that a sender gave the same id as SQLite 019 does: its id names its own
-- seq, no headers, an empty body, a removed-body record of 0 bytes and an 'ignored'
-- outcome that names no user.
UPDATE inbox SET message_id = ' ' || message_id
WHERE message_id = 'erased:' || seq AND headers = '{}' AND length(body) = 0
  AND seq IN (SELECT seq FROM removed_bodies WHERE body_bytes = 0)
  AND seq IN (SELECT seq FROM delivery_outcomes WHERE status = 'ignored' AND user_id IS NULL);
