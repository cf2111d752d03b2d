-- 012: destinations an operator paused (`healthhook forward pause DEST`, the console).
-- While a destination is paused its sender starts no POST; its entries keep accumulating
-- in the outbox as usual (max_outbox_mib still applies: the oldest are dropped past it).
-- A row here is the pause; resume deletes it. Kept in the store so a pause survives a
-- restart and holds for every instance (store/outbox.h).
CREATE TABLE forward_pauses (
  destination TEXT PRIMARY KEY,   -- the [[forward]] name
  paused_at   INTEGER NOT NULL    -- Unix ms, UTC
) STRICT;
