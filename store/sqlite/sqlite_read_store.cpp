#include "store/sqlite/sqlite_read_store.h"

#include "store/queries/read_store_of.h"
#include "store/sqlite/database.h"
#include "store/sqlite/queries/query_statements.h"
#include "store/sqlite/queries/sample_query.h"
#include "store/unfinished_rebuild_sql.h"

namespace hh::store {
namespace {

// A read-only connection: its read snapshots are transactions (WAL: the writer goes on).
class SqliteReadSession : public sqlite::Connection {
 public:
  explicit SqliteReadSession(sqlite::Connection db) : sqlite::Connection(std::move(db)) {}
  Result<void> begin_snapshot() { return exec("BEGIN"); }
  void end_snapshot() { (void)exec("COMMIT"); }  // nothing was written
};

// The SQLite read policy of the queries written once (store/queries/listings.h). The
// queries prepare their statements on first use (query_statements.h).
struct SqliteReads {
  static constexpr schema::Dialect dialect = schema::Dialect::sqlite;
  using Session = SqliteReadSession;
  template <size_t N>
  using Listings = QueryStatements<N>;
  using SampleQuery = SqliteSampleQuery;
  // The unary + keeps SQLite from choosing the received_at index here, which would read the
  // window in time order and then sort whole rows (bodies included) by seq.
  static constexpr std::string_view kDeliveryWindow =
      "+received_at >= ?3 AND +received_at < ?4 AND (?5 IS NULL OR coalesce(event_type, '') GLOB ?5)";
  static std::string event_type_pattern(const std::string& glob) { return glob; }
  // The search's user ids, ?8 (a JSON array of strings), as a list for IN.
  static constexpr std::string_view kSearchedUserIds = "(SELECT value FROM json_each(?8))";
  static Result<std::optional<int64_t>> unfinished_rebuild(Session& session) {
    return session.query_int(kUnfinishedRebuildSql);
  }
};

}  // namespace

Result<std::unique_ptr<ReadStore>> open_sqlite_read_store(const std::string& path) {
  auto db = open_for_reading(path);
  if (!db) return fail(db);
  return std::unique_ptr<ReadStore>(new ReadStoreOf<SqliteReads>(std::move(*db)));
}

}  // namespace hh::store
