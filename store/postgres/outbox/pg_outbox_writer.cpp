#include "store/postgres/outbox/pg_outbox_writer.h"

#include <atomic>

#include "store/schema/dialect.h"

namespace hh::store {
namespace {

// Unix milliseconds now, in SQL (the store has no clock of its own to pass in).
constexpr std::string_view kPgoutNowMs = "floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint";

using schema::sql_literal;

// The rule's globs over `column`, quoted into the statement (prepared once, at start): the
// globs come from the configuration.
std::string pgout_event_filter(const ForwardRule& rule, std::string_view column) {
  return schema::globs_condition(rule.events, column, schema::Dialect::postgres);
}

// Each rule's rows, tagged with the rule's place so that one destination's entries get
// their ids together, in the order SQLite's one-statement-per-destination gives them.
std::string pgout_union(const std::vector<const ForwardRule*>& rules, std::string_view select_for) {
  std::string sql;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i > 0) sql += " UNION ALL ";
    sql += "SELECT " + std::to_string(i) + " AS rule, " + sql_literal(rules[i]->destination) + " AS destination, " +
           std::string(select_for) + " AND " + pgout_event_filter(*rules[i], "event_type");
  }
  return sql;
}

// The owner and resource come from change_owners (001-schema.sql). `which`: the change
// rows, a condition on `c` (changes) with its parameters.
std::string pgout_change_insert(const std::vector<const ForwardRule*>& rules, std::string_view which) {
  return "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, row_count, from_ms, "
         "to_ms, user_id, order_key, created_at, next_attempt_at) "
         "SELECT destination, 'change', seq, event_type, table_name, row_key, op, row_count, from_ms, to_ms, user_id, "
         "coalesce(user_id, '') || '/' || resource, " + std::string(kPgoutNowMs) + ", " + std::string(kPgoutNowMs) +
         " FROM (" +
         pgout_union(rules,
                     "c.change_id, c.seq, d.event_type, c.table_name, c.row_key, c.op, c.row_count, c.from_ms, "
                     "c.to_ms, "
                     "o.user_id, o.resource FROM changes AS c JOIN inbox AS d ON d.seq = c.seq "
                     "JOIN change_owners AS o ON o.change_id = c.change_id WHERE " + std::string(which)) +
         ") AS picked ORDER BY rule, change_id";
}

// As outbox_writer.cpp: the user is the envelope's user_id, else its data's; the resource
// the event type without its last part. Each body is parsed once (the MATERIALIZED CTE).
// `which`: the deliveries, a condition on inbox with its parameters. A body retention
// removed is empty, not JSON: such a delivery gets no entry; nor one that is not UTF-8
// (hh_is_utf8, migration 013). One whose only fault for jsonb is a \u0000 or lone surrogate
// escape is JSON, as for SQLite's json_valid (hh_json_or_null, migration 015).
std::string pgout_delivery_insert(const std::vector<const ForwardRule*>& rules, std::string_view which) {
  return "WITH parsed AS MATERIALIZED (SELECT seq, event_type, message_id, "
         "CASE WHEN hh_is_utf8(body) THEN hh_json_or_null(body) END AS doc FROM inbox "
         "WHERE " + std::string(which) + " AND origin = 'webhook'), "
         "delivered AS (SELECT seq, event_type, message_id, coalesce(doc->>'user_id', doc->'data'->>'user_id') AS "
         "user_id, CASE WHEN strpos(coalesce(event_type, ''), '.') = 0 THEN coalesce(event_type, '') "
         "ELSE rtrim(rtrim(event_type, 'abcdefghijklmnopqrstuvwxyz_0123456789'), '.') END AS resource "
         "FROM parsed WHERE doc IS NOT NULL) "
         "INSERT INTO outbox (destination, kind, seq, event_type, table_name, row_key, op, user_id, order_key, "
         "created_at, next_attempt_at) "
         "SELECT destination, 'delivery', seq, event_type, 'deliveries', message_id, 'insert', user_id, "
         "coalesce(user_id, '') || '/' || resource, " + std::string(kPgoutNowMs) + ", " + std::string(kPgoutNowMs) +
         " FROM (" + pgout_union(rules, "seq, event_type, message_id, user_id, resource FROM delivered WHERE true") +
         ") AS picked ORDER BY rule, seq";
}

// Statement names are per connection; a writer created twice on one must not collide.
std::string pgout_statement_name(std::string_view what) {
  static std::atomic<int64_t> next{0};
  return "hh_outbox_" + std::string(what) + "_" + std::to_string(next.fetch_add(1));
}

std::string pgout_array(std::span<const int64_t> ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

}  // namespace

std::string pg_outbox_event_filter(const ForwardRule& rule, std::string_view column) {
  return pgout_event_filter(rule, column);
}

std::string pg_outbox_recreate_sql(const ForwardRule& rule) {
  const std::vector<const ForwardRule*> one{&rule};
  return rule.mode == ForwardMode::changes ? pgout_change_insert(one, "c.seq BETWEEN $1 AND $2")
                                           : pgout_delivery_insert(one, "seq BETWEEN $1 AND $2");
}

Result<PgOutboxWriter> PgOutboxWriter::create(pg::Connection& db, std::vector<ForwardRule> rules) {
  std::vector<const ForwardRule*> by_delivery, by_change;
  for (const ForwardRule& rule : rules) {
    (rule.mode == ForwardMode::deliveries ? by_delivery : by_change).push_back(&rule);
  }
  std::string deliveries, changes;
  if (!by_delivery.empty()) {
    deliveries = pgout_statement_name("deliveries");
    if (auto prepared = db.prepare(deliveries, pgout_delivery_insert(by_delivery, "seq = ANY ($1::bigint[])")); !prepared) {
      return fail(prepared, "outbox");
    }
  }
  if (!by_change.empty()) {
    changes = pgout_statement_name("changes");
    const std::string newest_of_step = "c.change_id > (SELECT max(change_id) FROM changes) - $1";
    if (auto prepared = db.prepare(changes, pgout_change_insert(by_change, newest_of_step)); !prepared) {
      return fail(prepared, "outbox");
    }
  }
  return PgOutboxWriter(db, std::move(deliveries), std::move(changes));
}

Result<void> PgOutboxWriter::deliveries(std::span<const int64_t> stored_seqs) {
  if (deliveries_.empty() || stored_seqs.empty()) return {};
  const std::string seqs = pgout_array(stored_seqs);
  auto done = db_->run(deliveries_, pg::Params().add(std::string_view(seqs)));
  if (!done) return fail(done, "outbox");
  return {};
}

Result<void> PgOutboxWriter::changes(size_t inserted) {
  if (changes_.empty() || inserted == 0) return {};
  auto done = db_->run(changes_, pg::Params().add(static_cast<int64_t>(inserted)));
  if (!done) return fail(done, "outbox");
  return {};
}

}  // namespace hh::store
