-- 019: an erasure's placeholder row takes a message id no delivery can carry.
--
-- `purge-user` keeps the newest seq taken with a placeholder inbox row when it erases the
-- newest delivery (store/sqlite/sqlite_erasure.cpp). Its id was "erased:<seq>", which a
-- delivery may carry too: a signed delivery with that svix-id was answered `duplicate`
-- and not stored, and a stored delivery with the id of a later placeholder made that
-- erasure fail (UNIQUE constraint failed: inbox.message_id). The id now starts with a
-- space (" erased:<seq>"): HTTP trims a header value's edges and replay refuses such an
-- id, so no delivery is ever stored with it. A placeholder is told from a delivery that
-- a sender gave the same id by what only it has: its id names its own seq, it has no
-- headers and an empty body, a removed-body record of 0 bytes and an 'ignored' outcome
-- that names no user (a delivery with an empty body is 'invalid').
UPDATE inbox SET message_id = ' ' || message_id
WHERE message_id = 'erased:' || seq AND headers = '{}' AND length(body) = 0
  AND seq IN (SELECT seq FROM removed_bodies WHERE body_bytes = 0)
  AND seq IN (SELECT seq FROM delivery_outcomes WHERE status = 'ignored' AND user_id IS NULL);
