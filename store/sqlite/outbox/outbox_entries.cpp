#include "store/sqlite/outbox/outbox_entries.h"

#include <optional>
#include <string>

#include "store/schema/dialect.h"

namespace hh::store {
namespace {

// Unix milliseconds now, in SQL (the store has no clock of its own to pass in).
constexpr std::string_view kNowMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

using schema::sql_literal;

std::string created_at(EntriesMade made) { return made == EntriesMade::by_sender ? "d.received_at" : std::string(kNowMs); }

}  // namespace

// The rule's globs over `column`, quoted into the statement (prepared once, at start): the
// globs come from the configuration.
std::string outbox_event_filter(const ForwardRule& rule, std::string_view column) {
  return schema::globs_condition(rule.events, column, schema::Dialect::sqlite);
}

namespace {

// The owner and resource come from change_owners (008-outbox.sql). `which`: the change
// rows, a condition on `c` (changes) with its parameters.
std::string change_insert(const ForwardRule& rule, std::string_view which, EntriesMade made) {
  return "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, "
         "to_ms, user_id, order_key, created_at, next_attempt_at) "
         "SELECT " + sql_literal(rule.destination) + ", 'change', c.seq, d.event_type, c.table_name, c.row_key, c.op, "
         "c.row_count, c.from_ms, c.to_ms, o.user_id, ifnull(o.user_id, '') || '/' || o.resource, " +
         created_at(made) + ", " + std::string(kNowMs) +
         " FROM changes AS c JOIN inbox AS d ON d.seq = c.seq JOIN change_owners AS o ON o.change_id = c.change_id "
         "WHERE " + std::string(which) + " AND " + outbox_event_filter(rule, "d.event_type") +
         " ORDER BY c.change_id";
}

// A delivery's user is the envelope's user_id, else its data's (as rows/delivery_user
// reads it); its resource the event type without the last part ("daily.data.sleep" of
// "daily.data.sleep.created"), so a created and an updated event of one summary share a
// key. `which`: the deliveries, a condition on `d` (inbox) with its parameters. A body
// that is not JSON (not UTF-8, or a NUL byte after a JSON object, included: hh_json_text, sqlite/connection.cpp) gets no entry;
// one whose strings hold a \u0000 or lone surrogate escape is JSON text and gets one, as on
// PostgreSQL (its migration 015). One that [retention] body_days removed (empty, recorded
// with its size) gets one when the sender makes them (far behind, it may come to it only
// then): it fails for good when it is sent, with the reason, as it would had it been made
// at ingest (docs/forwarding.md). `forward requeue --dropped` counts it as not made again;
// purge-user's placeholder of an erased seq (recorded with size 0) never gets one.
std::string delivery_insert(const ForwardRule& rule, std::string_view which, EntriesMade made) {
  const std::string removed =
      made == EntriesMade::by_sender
          ? "EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = d.seq AND r.body_bytes > 0)"
          : "0";
  const std::string body_user =
      "coalesce(json_extract(CAST(d.body AS TEXT), '$.user_id'), json_extract(CAST(d.body AS TEXT), '$.data.user_id'))";
  // json_extract() fails on what is not JSON: the removed body's user is the one retention recorded.
  const std::string user = made == EntriesMade::by_sender
                               ? "CASE WHEN json_valid(CAST(d.body AS TEXT)) THEN " + body_user +
                                     " ELSE (SELECT r.user_id FROM removed_bodies AS r WHERE r.seq = d.seq) END"
                               : body_user;
  const std::string resource =
      "CASE WHEN instr(ifnull(d.event_type, ''), '.') = 0 THEN ifnull(d.event_type, '') "
      "ELSE rtrim(rtrim(d.event_type, 'abcdefghijklmnopqrstuvwxyz_0123456789'), '.') END";
  return "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, user_id, order_key, "
         "created_at, next_attempt_at) "
         "SELECT " + sql_literal(rule.destination) + ", 'delivery', seq, event_type, 'deliveries', message_id, 'insert', "
         "user, ifnull(user, '') || '/' || resource, created_at, " + std::string(kNowMs) +
         " FROM (SELECT d.seq, d.event_type, d.message_id, " + created_at(made) + " AS created_at, " + user +
         " AS user, " + resource + " AS resource " +
         "FROM inbox AS d WHERE " + std::string(which) + " AND d.origin = 'webhook' "
         "AND (json_valid(CAST(d.body AS TEXT)) AND hh_json_text(d.body) OR " + removed + ") AND " +
         outbox_event_filter(rule, "d.event_type") +
         " ORDER BY d.seq)";
}

}  // namespace

std::string outbox_entries_sql(const ForwardRule& rule, EntriesMade made) {
  return rule.mode == ForwardMode::changes ? change_insert(rule, "c.seq BETWEEN ?1 AND ?2", made)
                                           : delivery_insert(rule, "d.seq BETWEEN ?1 AND ?2", made);
}

Result<void> start_forward_positions(sqlite::Connection& db, std::span<const ForwardRule> rules,
                                    bool all_configured) {
  if (rules.empty() && !all_configured) return {};  // a command that does not forward: no write
  std::string configured = "('', '')", started = "";
  for (const ForwardRule& rule : rules) {
    const std::string row = "(" + sql_literal(rule.destination) + ", " + sql_literal(mode_name(rule.mode));
    configured += ", " + row + ")";
    started += std::string(started.empty() ? "" : ", ") + row + ", -1)";
  }
  const std::string among_rules = "(destination, mode) IN (VALUES " + configured + ")";
  auto txn = sqlite::Transaction::begin(db);
  if (!txn) return fail(txn, "forwarding positions");
  if (all_configured) {
    if (auto gone = db.exec("DELETE FROM forward_positions WHERE NOT " + among_rules); !gone) {
      return fail(gone, "forwarding positions");
    }
  }
  if (!rules.empty()) {
    // A row the writer makes entries for moves to the bound, never back: what was stored or
    // applied while no `serve` forwarded to it (an offline replay, a time it was not
    // configured) gets none, as before, and a rebuild interrupted half-way repeats none. One
    // the sender makes them for keeps its position: what it had not made before a stop or a
    // crash is made after it.
    auto added = db.exec("INSERT INTO forward_positions (destination, mode, after_seq) VALUES " + started +
                         " ON CONFLICT (destination, mode) DO NOTHING");
    if (!added) return fail(added, "forwarding positions");
    auto moved = db.exec(
        "UPDATE forward_positions SET after_seq = max(after_seq, (SELECT b.bound FROM forward_backlog AS b "
        "WHERE b.destination = forward_positions.destination AND b.mode = forward_positions.mode)) "
        "WHERE writer_makes = 1 AND " + among_rules);
    if (!moved) return fail(moved, "forwarding positions");
  }
  return txn->commit();
}

Result<WriterEntries> WriterEntries::create(sqlite::Connection& db, std::span<const ForwardRule> rules,
                                            ForwardMode mode) {
  std::vector<Destination> destinations;
  for (const ForwardRule& rule : rules) {
    if (rule.mode != mode) continue;
    const std::string row = "destination = " + sql_literal(rule.destination) + " AND mode = " +
                            sql_literal(mode_name(mode));
    auto position = db.prepare("SELECT after_seq FROM forward_positions WHERE " + row + " AND writer_makes = 1");
    if (!position) return fail(position, "forwarding position of " + rule.destination);
    auto make = db.prepare(outbox_entries_sql(rule, EntriesMade::by_writer));
    if (!make) return fail(make, "outbox of " + rule.destination);
    auto advance = db.prepare("UPDATE forward_positions SET after_seq = ?1 WHERE " + row);
    if (!advance) return fail(advance, "forwarding position of " + rule.destination);
    destinations.push_back({rule.destination, std::move(*position), std::move(*make), std::move(*advance)});
  }
  return WriterEntries(std::move(destinations));
}

Result<void> WriterEntries::made_through(int64_t last_seq) {
  for (Destination& d : destinations_) {
    auto found = d.position.step();
    if (!found) return fail(found, "forwarding position of " + d.name);
    const std::optional<int64_t> after = *found ? std::optional(d.position.column_int(0)) : std::nullopt;
    d.position.reset();
    // None: the sender makes them (or `serve` was not started with this destination).
    if (!after || *after >= last_seq) continue;
    d.make.bind(1, *after + 1).bind(2, last_seq);
    if (auto made = d.make.run(); !made) return fail(made, "outbox of " + d.name);
    d.advance.bind(1, last_seq);
    if (auto moved = d.advance.run(); !moved) return fail(moved, "forwarding position of " + d.name);
  }
  return {};
}

}  // namespace hh::store
