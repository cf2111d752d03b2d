// store::StoreFigures on PostgreSQL (/metrics): each figure is one short statement in
// autocommit on a connection of its own, so no snapshot outlives a call.
#include "store/postgres/read/pg_read_store.h"
#include "store/postgres/read/read_session.h"

namespace hh::store {
namespace {

// Figures read what SQLite's do (store/sqlite/sqlite_figures.cpp). The write-ahead log is
// the server's, shared by every database on it: its size when we may list it (pg_monitor
// or superuser), else 0.
constexpr std::string_view kPgInboxPositions =
    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM inbox), hh_processed_seq()";
constexpr std::string_view kPgOldestUnapplied = "SELECT received_at FROM inbox WHERE seq > $1 ORDER BY seq LIMIT 1";
constexpr std::string_view kPgOutcomeCounts =
    "SELECT COALESCE(family, 'none'), status, COUNT(*) FROM deliveries WHERE seq > $1 AND seq <= $2 "
    "GROUP BY 1, 2 ORDER BY COALESCE(family, 'none') COLLATE \"C\", status COLLATE \"C\"";
constexpr std::string_view kPgJobsByState = "SELECT state, COUNT(*) FROM jobs GROUP BY state";
// Two statements, not a CASE: PostgreSQL checks EXECUTE on every function of a statement
// when it starts, so a branch never taken still fails it for a role without the right.
constexpr std::string_view kPgSizes =
    "SELECT pg_database_size(current_database()), has_function_privilege('pg_ls_waldir()', 'EXECUTE')";
constexpr std::string_view kPgWalSize = "SELECT COALESCE(sum(size), 0) FROM pg_ls_waldir()";

class PgFigures final : public StoreFigures {
 public:
  explicit PgFigures(pgread::ReaderLink db) : db_(std::move(db)) {}

  Result<InboxPositions> positions() override {
    auto rows = db_.query(kPgInboxPositions);
    if (!rows) return fail(rows);
    if (rows->empty()) return fail("processor_state has no row");
    InboxPositions out;
    out.last_seq = rows->integer(0, 0);
    out.applied_seq = rows->integer(0, 1);
    auto oldest = db_.query(kPgOldestUnapplied, pg::Params().add(out.applied_seq));
    if (!oldest) return fail(oldest);
    if (!oldest->empty()) out.oldest_unapplied_received_at_ms = oldest->integer(0, 0);
    return out;
  }

  Result<std::vector<OutcomeCount>> outcome_counts(int64_t after, int64_t upto) override {
    auto rows = db_.query(kPgOutcomeCounts, pg::Params().add(after).add(upto));
    if (!rows) return fail(rows);
    std::vector<OutcomeCount> found;
    for (int i = 0; i < rows->size(); ++i) {
      found.push_back({std::string(rows->text(i, 0)), std::string(rows->text(i, 1)), rows->integer(i, 2)});
    }
    return found;
  }

  Result<std::map<std::string, int64_t>> jobs_by_state() override {
    auto rows = db_.query(kPgJobsByState);
    if (!rows) return fail(rows);
    std::map<std::string, int64_t> by_state;
    for (int i = 0; i < rows->size(); ++i) by_state[std::string(rows->text(i, 0))] = rows->integer(i, 1);
    return by_state;
  }

  Result<StoreSizes> sizes() override {
    auto rows = db_.query(kPgSizes);
    if (!rows) return fail(rows);
    StoreSizes sizes{rows->integer(0, 0), 0};
    if (!rows->boolean(0, 1)) return sizes;
    auto wal = db_.query(kPgWalSize);
    if (!wal) return fail(wal);
    sizes.log_bytes = wal->integer(0, 0);
    return sizes;
  }

 private:
  pgread::ReaderLink db_;
};

}  // namespace

Result<std::unique_ptr<StoreFigures>> open_postgres_figures(const Database& database) {
  auto db = pgread::ReaderLink::open(database);
  if (!db) return fail(db);
  return std::unique_ptr<StoreFigures>(new PgFigures(std::move(*db)));
}

}  // namespace hh::store
