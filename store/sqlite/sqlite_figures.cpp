#include "store/sqlite/sqlite_figures.h"

#include <sys/stat.h>

#include <array>

#include "store/sqlite/database.h"

namespace hh::store {
namespace {

// A scrape must not wait long for a lock (WAL readers are blocked only in rare recovery
// cases).
constexpr std::chrono::milliseconds kFiguresBusyTimeout{250};

// The statements, prepared once when the figures are opened.
enum Figure : size_t { inbox_positions, oldest_unapplied, outcome_counts_of, jobs_by_state_of, database_bytes };
constexpr std::array<std::string_view, 5> kFigureSql = {
    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM inbox), applied_seq FROM processor_state WHERE id = 1",
    "SELECT received_at FROM inbox WHERE seq > ?1 ORDER BY seq LIMIT 1",
    "SELECT COALESCE(family, 'none'), status, COUNT(*) FROM deliveries WHERE seq > ?1 AND seq <= ?2 GROUP BY 1, 2",
    "SELECT state, COUNT(*) FROM jobs GROUP BY state",
    "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
};

int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// Every statement is reset after each use, so no read snapshot outlives a call (an open
// one would keep checkpoints from reaching the end of the WAL).
class SqliteFigures final : public StoreFigures {
 public:
  SqliteFigures(std::string path, sqlite::Connection db, std::vector<sqlite::Statement> statements)
      : path_(std::move(path)), db_(std::move(db)), statements_(std::move(statements)) {}

  Result<InboxPositions> positions() override {
    InboxPositions out;
    auto found = statement(inbox_positions).first_row([&out](const sqlite::Statement& row) {
      out.last_seq = row.column_int(0);
      out.applied_seq = row.column_int(1);
    });
    if (!found) return fail(found);
    if (!*found) return fail("processor_state has no row");
    sqlite::Statement& oldest = statement(oldest_unapplied);
    oldest.bind(1, out.applied_seq);
    auto read = oldest.first_row(
        [&out](const sqlite::Statement& row) { out.oldest_unapplied_received_at_ms = row.column_int(0); });
    if (!read) return fail(read);
    return out;
  }

  Result<std::vector<OutcomeCount>> outcome_counts(int64_t after, int64_t upto) override {
    sqlite::Statement& counts = statement(outcome_counts_of);
    counts.bind(1, after).bind(2, upto);
    std::vector<OutcomeCount> found;
    auto read = counts.for_each_row([&found](const sqlite::Statement& row) {
      found.push_back({std::string(row.column_text(0)), std::string(row.column_text(1)), row.column_int(2)});
    });
    if (!read) return fail(read);
    return found;
  }

  Result<std::map<std::string, int64_t>> jobs_by_state() override {
    std::map<std::string, int64_t> by_state;
    auto read = statement(jobs_by_state_of).for_each_row(
        [&by_state](const sqlite::Statement& row) { by_state[std::string(row.column_text(0))] = row.column_int(1); });
    if (!read) return fail(read);
    return by_state;
  }

  Result<StoreSizes> sizes() override {
    int64_t bytes = 0;
    auto read = statement(database_bytes).first_row(
        [&bytes](const sqlite::Statement& row) { bytes = row.column_optional_int(0).value_or(0); });
    if (!read) return fail(read);
    return StoreSizes{bytes, file_bytes(path_ + "-wal")};
  }

 private:
  sqlite::Statement& statement(Figure figure) { return statements_[figure]; }

  const std::string path_;
  sqlite::Connection db_;                     // declared before the statements: they are finalized first
  std::vector<sqlite::Statement> statements_;  // in Figure order
};

}  // namespace

Result<std::unique_ptr<StoreFigures>> open_sqlite_figures(const std::string& path) {
  auto db = open_for_reading(path);
  if (!db) return fail(db);
  db->wait_when_busy(kFiguresBusyTimeout);
  std::vector<sqlite::Statement> statements;
  for (std::string_view sql : kFigureSql) {
    auto prepared = db->prepare(sql);
    if (!prepared) return fail(prepared);
    statements.push_back(std::move(*prepared));
  }
  return std::unique_ptr<StoreFigures>(new SqliteFigures(path, std::move(*db), std::move(statements)));
}

}  // namespace hh::store
