-- 005: who the user is, where samples come from, and the service's provider list
-- (spec §4 "Identity"); indexes for the per-user reads of the read API.
--
-- Existing databases: the new tables and column start empty. The processor fills them
-- from deliveries applied from now on; `healthhook rebuild` fills them from the whole
-- inbox (users, series.source_id, providers from stored provider lists).

-- users: one row per user the service named in a webhook delivery (derived).
CREATE TABLE users (
  user_id        TEXT PRIMARY KEY,  -- the service's user id: $.user_id of the envelope, else $.data.user_id
  client_user_id TEXT,              -- the envelope's client_user_id (the customer's own id for the user);
                                    -- NULL until a delivery carries one (envelopes before Mar 2024 did not)
  team_id        TEXT,              -- the envelope's team_id, else a lab order's team_id
  first_seen_ms  INTEGER NOT NULL,  -- received_at of the earliest delivery naming the user (Unix ms, UTC)
  last_seen_ms   INTEGER NOT NULL,  -- received_at of the latest, to a minute (it moves in steps of 60 s or more)
  seq            INTEGER NOT NULL   -- the delivery that created the row or last changed client_user_id/team_id
) STRICT;
-- A backend joins its own users on client_user_id.
CREATE INDEX users_client_user_id ON users (client_user_id);

-- series.source_id: $.data.source_id of the timeseries deliveries of the series (the
-- service's id of the source connection; an integer in its docs, kept as sent). The latest
-- delivery that carried one wins; NULL when none did (fetched pages never do).
ALTER TABLE series ADD COLUMN source_id ANY;

-- providers: the service's provider list, GET /v2/providers, fetched at start and daily
-- and stored as an inbox row (origin 'fetch', event_type 'fetch.providers'), so it is
-- derived like everything else: one row per slug, latest list wins; a provider missing
-- from a later list is kept (older data still names it).
CREATE TABLE providers (
  slug                TEXT PRIMARY KEY,
  name                TEXT,             -- display name, e.g. "Apple HealthKit"
  description         TEXT,
  logo                TEXT,             -- URL of the logo, NULL when the service has none
  auth_type           TEXT,             -- oauth | team_oauth | sdk | password | email | app (non-exhaustive)
  supported_resources TEXT,             -- JSON array of resource names as sent, NULL when absent
  seq                 INTEGER NOT NULL, -- the stored list this version came from
  data                TEXT NOT NULL     -- the provider object as received
) STRICT;

-- samples_named gains the series' source_id.
DROP VIEW samples_named;
CREATE VIEW samples_named AS
  SELECT s.user_id, s.resource, s.provider, s.source_type, p.t_ms, p.timezone_offset, p.value, p.unit, p.type,
         p.start_ms, p.end_ms, p.systolic, p.diastolic, p.extra, p.seq, s.source_id
  FROM samples p JOIN series s USING (series_id);

-- Per-user reads (GET /v1/users/{user_id}, …/orders; `healthhook query … --user`).
CREATE INDEX devices_user ON devices (user_id);
CREATE INDEX lab_orders_user ON lab_orders (user_id);
CREATE INDEX lab_appointments_user ON lab_appointments (user_id);
CREATE INDEX lab_appointments_order ON lab_appointments (order_id);
CREATE INDEX lab_results_user ON lab_results (user_id);
