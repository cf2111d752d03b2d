-- 010: the forwarding promises of spec §10 (issue 45; store/outbox.h).
--
-- post_id (was batch_id, set only when a POST of several failed): the POST an entry went
-- out in. The sender pins every POST's entries to it before the POST goes out (its
-- webhook-id is hhf_<post_id>), and a retry sends exactly the entries pinned to it: an id
-- names one content for ever, so a backend that deduplicates by webhook-id never drops a
-- newer change as a repeat. Entries that went out alone before this version are pinned
-- to themselves here (they were sent under their own id).
--
-- head: 1 for the first pending entry of each order key (user/resource) of a
-- destination, 0 for the others, NULL until the sender has looked (the writer inserts
-- NULL: it never reads the outbox, and the sender is the only one that moves marks, so
-- no two transactions race for one). The sender plans from the due heads: a key whose
-- first entry waits for its retry holds back only itself, whatever waits behind it.
--
-- What the sender's look costs (n entries in the outbox, k returned):
--   classify():   outbox_unclassified finds the new entries (k), and each one's key's
--                 first pending entry is one seek in outbox_keys: O(k log n).
--   due_heads():  one range of outbox_due_heads (only heads are in it, by due time):
--                 O(log n + k), however many entries wait behind keys that are not due.
--   key_entries(), post_entries(), promoting a key's next entry: one seek each.
-- The writer pays one more index entry per row than before (outbox_keys and
-- outbox_unclassified instead of outbox_destination); the sender one more row update
-- (the mark) and the pin.
--
-- outbox_dropped: what the disk budget (max_outbox_mib) dropped, per destination, as
-- ranges of seq with a count, instead of a row per entry kept for ever (a backend gone for
-- a month would otherwise fill the disk with them). `forward requeue --dropped` makes the
-- entries again from the change feed or the inbox. The `dropped` rows of earlier versions
-- become one range per destination.
ALTER TABLE outbox RENAME COLUMN batch_id TO post_id;
ALTER TABLE outbox ADD COLUMN head INTEGER;
UPDATE outbox SET post_id = outbox_id WHERE post_id IS NULL AND attempts > 0;

CREATE TABLE outbox_dropped (
  range_id    INTEGER PRIMARY KEY,
  destination TEXT NOT NULL,     -- the [[forward]] name
  first_seq   INTEGER NOT NULL,  -- the deliveries whose entries were dropped, both ends included
  last_seq    INTEGER NOT NULL,
  entries     INTEGER NOT NULL,  -- how many entries were dropped in it
  dropped_at  INTEGER NOT NULL   -- Unix ms, UTC: the last drop that added to it
) STRICT;
CREATE INDEX outbox_dropped_destination ON outbox_dropped (destination, last_seq);
INSERT INTO outbox_dropped (destination, first_seq, last_seq, entries, dropped_at)
  SELECT destination, min(seq), max(seq), count(*), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM outbox WHERE state = 'dropped' GROUP BY destination;
DELETE FROM outbox WHERE state = 'dropped';

DROP INDEX outbox_destination;
-- A key's entries in order: its first pending entry (classify, promote), a POST's run.
CREATE INDEX outbox_keys ON outbox (destination, state, order_key, outbox_id);
-- The heads by due time: what the sender plans from.
CREATE INDEX outbox_due_heads ON outbox (destination, next_attempt_at, outbox_id) WHERE state = 'pending' AND head = 1;
-- The entries the sender has not looked at yet.
CREATE INDEX outbox_unclassified ON outbox (destination, outbox_id) WHERE state = 'pending' AND head IS NULL;
-- A pinned POST's entries.
CREATE INDEX outbox_posts ON outbox (post_id) WHERE post_id IS NOT NULL;

-- When a key's head goes (sent, dropped, or erased with its user: whoever deletes it) or
-- dies, the key's next pending entry becomes its head, in the same transaction. SQLite
-- reads each row as it deletes or updates it, so when one statement takes several of a
-- key's first entries the mark moves along until it rests on the first one left.
CREATE TRIGGER outbox_head_deleted AFTER DELETE ON outbox WHEN old.head = 1 AND old.state = 'pending'
BEGIN
  UPDATE outbox SET head = 1 WHERE outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o
    WHERE o.destination = old.destination AND o.state = 'pending' AND o.order_key = old.order_key) AND head IS NOT 1;
END;
CREATE TRIGGER outbox_head_left AFTER UPDATE OF state ON outbox
  WHEN old.head = 1 AND old.state = 'pending' AND new.state <> 'pending'
BEGIN
  UPDATE outbox SET head = 1 WHERE outbox_id = (SELECT min(o.outbox_id) FROM outbox AS o
    WHERE o.destination = old.destination AND o.state = 'pending' AND o.order_key = old.order_key) AND head IS NOT 1;
END;
