// store::ReadStore on PostgreSQL: one connection (read_session.h) and the queries written
// once (store/queries/) on it.
#include "store/postgres/read/pg_read_store.h"

#include "store/schema/glob_regex.h"
#include "store/postgres/read/pg_listings.h"
#include "store/postgres/read/pg_sample_query.h"
#include "store/postgres/read/read_session.h"
#include "store/queries/read_store_of.h"
#include "store/unfinished_rebuild_sql.h"

namespace hh::store {
namespace {

// The PostgreSQL read policy of the queries written once (store/queries/listings.h). A
// snapshot is the session's REPEATABLE READ READ ONLY transaction: every query of the
// snapshot sees the state of its first one.
struct PgReads {
  static constexpr schema::Dialect dialect = schema::Dialect::postgres;
  using Session = pgread::ReadSession;
  template <size_t N>
  using Listings = pgread::PgListings<N>;
  using SampleQuery = pgread::PgSampleQuery;
  // The event-type glob as a regular expression (glob_regex.h).
  static constexpr std::string_view kDeliveryWindow =
      "received_at >= ?3 AND received_at < ?4 AND (?5::text IS NULL OR coalesce(event_type, '') ~ ?5)";
  static std::string event_type_pattern(const std::string& glob) { return schema::glob_to_regex(glob); }
  // The search's user ids, ?8 (a JSON array of strings), as a list for IN.
  static constexpr std::string_view kSearchedUserIds = "(SELECT json_array_elements_text(?8::json))";
  static Result<std::optional<int64_t>> unfinished_rebuild(Session& session) {
    auto rows = session.query(kUnfinishedRebuildSql);
    if (!rows) return fail(rows);
    if (rows->empty()) return std::optional<int64_t>{};
    return rows->optional_integer(0, 0);
  }
};

}  // namespace

Result<std::unique_ptr<ReadStore>> open_postgres_read_store(const Database& database) {
  auto db = pgread::ReaderLink::open(database);
  if (!db) return fail(db);
  return std::unique_ptr<ReadStore>(new ReadStoreOf<PgReads>(std::move(*db)));
}

}  // namespace hh::store
