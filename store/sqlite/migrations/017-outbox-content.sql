-- 017: what a changes-mode POST carried, kept with its entries (spec §10: "an id names
-- one exact content forever").
--
-- Until now a retry of a POST sent the same entries under the same webhook-id, but read
-- their rows again when it went out: a row changed between the attempts went out with its
-- newer content under the old id, and a backend that had applied the first attempt and
-- acknowledges a repeated id without applying it again kept the older content. The sender
-- now reads each entry's change (its JSON object in the POST, row and all) when it pins the
-- POST, and writes it here when an attempt fails; every later attempt, a restart's and
-- `forward requeue`'s included, sends these bytes. NULL: not sent yet, sent once and
-- answered 2xx, a POST of more than 200 rows, a deliveries-mode entry (its body never
-- changes), or pinned before this version: then the rows are read when it is sent.
-- Erasure removes it with its entry. content_bytes: its size, which max_outbox_mib counts
-- (forward/outbox_budget.h) without reading it.
ALTER TABLE outbox ADD COLUMN content TEXT;
ALTER TABLE outbox ADD COLUMN content_bytes INTEGER;
