#include "store/postgres/copy_progress.h"

#include <string>

#include "store/unfinished_copy.h"

namespace hh::store {
namespace {

// Whether the progress table is there and whether this role may read it (a least-privilege
// role granted SELECT on the tables before migrate created it may not), and the role's name
// for the refusal: one lookup in the catalogue, no table touched.
constexpr std::string_view kProgressTableSql =
    "SELECT t.id IS NOT NULL, coalesce(has_table_privilege(t.id, 'SELECT'), false), current_user "
    "FROM (SELECT to_regclass('sqlite_copy_progress')::oid AS id) AS t";

// The unfinished mark, and tables whose copy stopped short: the fingerprint (`source`,
// "inbox=N samples=M … ") holds each table's row count in the source. A name not found
// there counts as done.
constexpr std::string_view kTablesShortSql =
    "SELECT count(*) FROM sqlite_copy_progress AS p WHERE p.table_name = '(unfinished)' OR p.rows_copied < "
    "coalesce(substring(' ' || p.source, ' ' || p.table_name || '=([0-9]+) ')::bigint, 0)";

// Copied deliveries past inbox_seq: the copy's last transaction has not run (an unset
// sequence reads NULL). pg_sequence_last_value checks its privilege when called, so CASE
// keeps a role without it (a reader granted the tables only) from failing here.
constexpr std::string_view kInboxPastSequenceSql =
    "SELECT CASE WHEN has_sequence_privilege(s.id, 'SELECT,USAGE') THEN "
    "coalesce(pg_sequence_last_value(s.id) < (SELECT max(seq) FROM inbox), "
    "(SELECT max(seq) FROM inbox) IS NOT NULL) ELSE false END "
    "FROM (SELECT pg_get_serial_sequence('inbox', 'seq')::regclass AS id) AS s";

}  // namespace

Result<void> refuse_unfinished_copy(pg::Connection& db, const Database& database) {
  static_assert(kProgressTableSql.find(kSqliteCopyProgressTable) != std::string_view::npos);
  static_assert(kTablesShortSql.find(kCopyUnfinishedMark) != std::string_view::npos);
  auto table = db.query(kProgressTableSql);
  if (!table) return fail(table, "looking for an unfinished migrate copy");
  if (!table->boolean(0, 0)) return {};
  // Unread, an unfinished copy would pass for a store (the inbox test below sees nothing
  // while the copy has not reached the inbox): this role would write into the half copy.
  if (!table->boolean(0, 1)) {
    const std::string role(table->text(0, 2));
    return fail(ErrorKind::other, loggable_location(database.location) + ": role " + role +
                                      " may not read table " + std::string(kSqliteCopyProgressTable) +
                                      " (left by `healthhook migrate`), so whether its copy has finished is unknown; "
                                      "GRANT SELECT ON " + std::string(kSqliteCopyProgressTable) + " TO " + role);
  }
  auto short_tables = db.query_int(kTablesShortSql);
  if (!short_tables) return fail(short_tables, "reading the migrate copy's progress");
  bool unfinished = short_tables->value_or(0) > 0;
  if (!unfinished) {
    auto past = db.query(kInboxPastSequenceSql);
    if (!past) return fail(past, "reading the migrate copy's progress");
    unfinished = !past->empty() && !past->is_null(0, 0) && past->boolean(0, 0);
  }
  if (!unfinished) return {};
  return fail(ErrorKind::data, loggable_location(database.location) + ": " + std::string(kCopyUnfinished));
}

}  // namespace hh::store
