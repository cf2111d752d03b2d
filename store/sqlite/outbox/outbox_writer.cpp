#include "store/sqlite/outbox/outbox_writer.h"

#include <string>

#include "store/schema/dialect.h"

namespace hh::store {
namespace {

// Unix milliseconds now, in SQL (the store has no clock of its own to pass in).
constexpr std::string_view kNowMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

using schema::sql_literal;

}  // namespace

// The rule's globs over `column`, quoted into the statement (prepared once, at start): the
// globs come from the configuration.
std::string outbox_event_filter(const ForwardRule& rule, std::string_view column) {
  return schema::globs_condition(rule.events, column, schema::Dialect::sqlite);
}

namespace {

// The owner and resource come from change_owners (008-outbox.sql). `which`: the change
// rows, a condition on `c` (changes) with its parameters.
std::string change_insert(const ForwardRule& rule, std::string_view which) {
  return "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, "
         "to_ms, user_id, order_key, created_at, next_attempt_at) "
         "SELECT " + sql_literal(rule.destination) + ", 'change', c.seq, d.event_type, c.table_name, c.row_key, c.op, "
         "c.row_count, c.from_ms, c.to_ms, o.user_id, ifnull(o.user_id, '') || '/' || o.resource, " +
         std::string(kNowMs) + ", " + std::string(kNowMs) +
         " FROM changes AS c JOIN inbox AS d ON d.seq = c.seq JOIN change_owners AS o ON o.change_id = c.change_id "
         "WHERE " + std::string(which) + " AND " + outbox_event_filter(rule, "d.event_type") +
         " ORDER BY c.change_id";
}

// A delivery's user is the envelope's user_id, else its data's (as rows/delivery_user
// reads it); its resource the event type without the last part ("daily.data.sleep" of
// "daily.data.sleep.created"), so a created and an updated event of one summary share a
// key. `which`: the deliveries, a condition on `d` (inbox) with its parameters. A body
// retention removed is empty, not JSON: such a delivery gets no entry.
std::string delivery_insert(const ForwardRule& rule, std::string_view which) {
  const std::string user =
      "coalesce(json_extract(CAST(d.body AS TEXT), '$.user_id'), json_extract(CAST(d.body AS TEXT), '$.data.user_id'))";
  const std::string resource =
      "CASE WHEN instr(ifnull(d.event_type, ''), '.') = 0 THEN ifnull(d.event_type, '') "
      "ELSE rtrim(rtrim(d.event_type, 'abcdefghijklmnopqrstuvwxyz_0123456789'), '.') END";
  return "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, user_id, order_key, "
         "created_at, next_attempt_at) "
         "SELECT " + sql_literal(rule.destination) + ", 'delivery', seq, event_type, 'deliveries', message_id, 'insert', "
         "user, ifnull(user, '') || '/' || resource, " + std::string(kNowMs) + ", " + std::string(kNowMs) +
         " FROM (SELECT d.seq, d.event_type, d.message_id, " + user + " AS user, " + resource + " AS resource " +
         "FROM inbox AS d WHERE " + std::string(which) + " AND d.origin = 'webhook' AND json_valid(CAST(d.body AS TEXT)) "
         "AND " + outbox_event_filter(rule, "d.event_type") + " ORDER BY d.seq)";
}

}  // namespace

std::string outbox_recreate_sql(const ForwardRule& rule) {
  return rule.mode == ForwardMode::changes ? change_insert(rule, "c.seq BETWEEN ?1 AND ?2")
                                           : delivery_insert(rule, "d.seq BETWEEN ?1 AND ?2");
}

Result<OutboxWriter> OutboxWriter::create(sqlite::Connection& db, std::span<const ForwardRule> rules,
                                          ForwardMode mode) {
  std::vector<sqlite::Statement> inserts;
  for (const ForwardRule& rule : rules) {
    if (rule.mode != mode) continue;
    auto insert = db.prepare(mode == ForwardMode::changes ? change_insert(rule, "c.change_id > ?1")
                                                          : delivery_insert(rule, "d.seq > ?1 AND d.seq <= ?2"));
    if (!insert) return fail(insert, "outbox of " + rule.destination);
    inserts.push_back(std::move(*insert));
  }
  return OutboxWriter(db, std::move(inserts));
}

Result<int64_t> OutboxWriter::last_change_id() {
  auto last = db_->query_int("SELECT max(change_id) FROM changes");
  if (!last) return fail(last);
  return last->value_or(0);
}

Result<void> OutboxWriter::changes(int64_t after_change_id) {
  for (sqlite::Statement& insert : inserts_) {
    insert.bind(1, after_change_id);
    if (auto done = insert.run(); !done) return fail(done, "outbox");
  }
  return {};
}

Result<void> OutboxWriter::deliveries(int64_t after_seq, int64_t last_seq) {
  for (sqlite::Statement& insert : inserts_) {
    insert.bind(1, after_seq).bind(2, last_seq);
    if (auto done = insert.run(); !done) return fail(done, "outbox");
  }
  return {};
}

}  // namespace hh::store
