-- 015: how far each destination's outbox entries are made, and who makes them
-- (store/outbox.h, docs/decisions/057-entries-made-by-the-sender-while-it-is-behind.md).
--
-- The writer adds a destination's entries inside the transactions whose rows they
-- describe (a processor step's changes, an ingest commit's deliveries) while the sender
-- keeps up. Those rows were most of what forwarding cost ingest (decision 056), and a
-- backend that is down or slow made the writer copy every change into an outbox that only
-- grew. So once a destination's outbox holds many entries, its sender takes the making
-- over (writer_makes = 0): it makes them itself from the change feed or the inbox, a
-- bounded number ahead of what it sends, and hands it back once it has caught up. The feed
-- and the inbox are kept in the store anyway: what is not made yet is not lost, and costs
-- no second copy.
--
-- A row is written for each configured destination when `serve` opens the store (the
-- position then: the last delivery applied, or the last stored in deliveries mode), so a
-- destination forwards what happens from then on, as before.
CREATE TABLE forward_positions (
  destination  TEXT NOT NULL,     -- the [[forward]] name
  mode         TEXT NOT NULL,     -- changes or deliveries: a destination whose mode changes starts again
  after_seq    INTEGER NOT NULL,  -- every delivery up to it has its entries made (or needs none)
  writer_makes INTEGER NOT NULL DEFAULT 1,  -- 1: the writer makes the next ones; 0: the sender (it is behind)
  PRIMARY KEY (destination, mode)
) STRICT;

-- Each position with its bound: the last delivery applied (changes) or stored (deliveries),
-- as far as entries can be made now. One writer: every delivery up to the newest is
-- committed.
CREATE VIEW forward_backlog AS
  SELECT destination, mode, after_seq, writer_makes,
    CASE mode WHEN 'changes' THEN ifnull((SELECT applied_seq FROM processor_state WHERE id = 1), 0)
              ELSE ifnull((SELECT max(seq) FROM inbox), 0) END AS bound
  FROM forward_positions;
