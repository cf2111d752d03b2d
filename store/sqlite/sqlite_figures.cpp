// store::StoreFigures on a read-only SQLite connection of its own (WAL: it never blocks the
// writer).
#include <sys/stat.h>

#include "store/figures.h"
#include "store/sqlite/database.h"

namespace hh::store {
namespace {

// A scrape must not wait long for a lock (WAL readers are blocked only in rare recovery
// cases).
constexpr std::string_view kReadPragmas = "PRAGMA busy_timeout = 250;";

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

class SqliteFigures final : public StoreFigures {
 public:
  SqliteFigures(std::string database, sqlite::Connection db) : database_(std::move(database)), db_(std::move(db)) {}

  Result<InboxPositions> positions() override {
    auto positions = db_.prepare(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM inbox), applied_seq FROM processor_state WHERE id = 1");
    if (!positions) return fail(positions.error());
    auto row = positions->step();
    if (!row) return fail(row.error());
    if (!*row) return fail("processor_state has no row");
    InboxPositions out;
    out.last_seq = positions->column_int(0);
    out.applied_seq = positions->column_int(1);
    auto oldest = db_.prepare("SELECT received_at FROM inbox WHERE seq > ?1 ORDER BY seq LIMIT 1");
    if (!oldest) return fail(oldest.error());
    oldest->bind(1, out.applied_seq);
    auto found = oldest->step();
    if (!found) return fail(found.error());
    if (*found) out.oldest_unapplied_received_at_ms = oldest->column_int(0);
    return out;
  }

  Result<std::vector<OutcomeCount>> outcome_counts(int64_t after, int64_t upto) override {
    auto counts = db_.prepare(
        "SELECT COALESCE(family, 'none'), status, COUNT(*) FROM deliveries WHERE seq > ?1 AND seq <= ?2 "
        "GROUP BY 1, 2");
    if (!counts) return fail(counts.error());
    counts->bind(1, after).bind(2, upto);
    std::vector<OutcomeCount> found;
    for (;;) {
      auto row = counts->step();
      if (!row) return fail(row.error());
      if (!*row) break;
      found.push_back({std::string(counts->column_text(0)), std::string(counts->column_text(1)), counts->column_int(2)});
    }
    return found;
  }

  Result<std::map<std::string, int64_t>> jobs_by_state() override {
    auto counts = db_.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
    if (!counts) return fail(counts.error());
    std::map<std::string, int64_t> by_state;
    for (;;) {
      auto row = counts->step();
      if (!row) return fail(row.error());
      if (!*row) break;
      by_state[std::string(counts->column_text(0))] = counts->column_int(1);
    }
    return by_state;
  }

  Result<StoreSizes> sizes() override {
    auto pages = db_.query_int("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
    if (!pages) return fail(pages.error());
    return StoreSizes{pages->value_or(0), file_size(database_ + "-wal")};
  }

 private:
  const std::string database_;
  sqlite::Connection db_;
};

}  // namespace

Result<std::unique_ptr<StoreFigures>> open_figures(const std::string& database) {
  auto db = open_for_reading(database);
  if (!db) return fail(db.error());
  if (auto configured = db->exec(kReadPragmas); !configured) return fail(configured.error());
  return std::unique_ptr<StoreFigures>(new SqliteFigures(database, std::move(*db)));
}

}  // namespace hh::store
