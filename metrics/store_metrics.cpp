#include "metrics/store_metrics.h"

#include <sys/stat.h>

#include <chrono>
#include <vector>

#include "common/log.h"
#include "store/sqlite/database.h"

namespace hh::metrics {
namespace {

// A scrape must not hold an io thread for long: give up on a lock quickly (WAL readers
// are blocked only in rare recovery cases).
constexpr std::string_view kReadPragmas = "PRAGMA busy_timeout = 250;";

// Follow-up job states of store/sqlite/migrations/003-jobs.sql, written even when zero so that
// alerts on e.g. state="dead" have a series to look at.
constexpr std::string_view kJobStates[] = {"queued", "running", "done", "dead"};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

Result<std::unique_ptr<StoreMetrics>> StoreMetrics::open(const std::string& database) {
  auto db = store::open_for_reading(database);
  if (!db) return fail("metrics: " + db.error());
  if (auto configured = db->exec(kReadPragmas); !configured) return fail("metrics: " + configured.error());
  return std::unique_ptr<StoreMetrics>(new StoreMetrics(database, std::move(*db)));
}

void StoreMetrics::collect(PrometheusText& out) {
  std::string error;
  auto note = [&error](const Result<void>& result) {
    if (!result && error.empty()) error = result.error();
  };
  int64_t applied_seq = 0;
  const Result<void> lag = collect_lag(out, applied_seq);
  note(lag);
  if (lag) note(collect_families(out, applied_seq));  // needs applied_seq
  note(collect_jobs(out));
  note(collect_sizes(out));
  out.gauge("healthhook_store_metrics_ok", "1 when every database read of this scrape succeeded",
            int64_t{error.empty() ? 1 : 0});
  if (!error.empty() && last_ok_) log::warn("metrics_database_read_failed").str("error", error);
  last_ok_ = error.empty();
}

Result<void> StoreMetrics::collect_lag(PrometheusText& out, int64_t& applied_seq) {
  auto positions = db_.prepare(
      "SELECT (SELECT COALESCE(MAX(seq), 0) FROM inbox), applied_seq FROM processor_state WHERE id = 1");
  if (!positions) return fail(positions.error());
  auto row = positions->step();
  if (!row) return fail(row.error());
  if (!*row) return fail("processor_state has no row");
  const int64_t last_seq = positions->column_int(0);
  applied_seq = positions->column_int(1);
  positions->reset();

  // The oldest delivery the processor has not applied yet: its wait is the lag in time.
  auto oldest = db_.prepare("SELECT received_at FROM inbox WHERE seq > ?1 ORDER BY seq LIMIT 1");
  if (!oldest) return fail(oldest.error());
  oldest->bind(1, applied_seq);
  auto found = oldest->step();
  if (!found) return fail(found.error());
  const double lag_seconds = *found ? std::max<int64_t>(0, now_ms() - oldest->column_int(0)) / 1000.0 : 0.0;
  oldest->reset();

  out.gauge("healthhook_inbox_last_seq", "Newest inbox sequence number", last_seq);
  out.gauge("healthhook_processor_applied_seq", "Every inbox row up to this seq has been applied", applied_seq);
  out.gauge("healthhook_processor_lag_deliveries", "Inbox rows stored but not yet applied by the processor",
            std::max<int64_t>(0, last_seq - applied_seq));
  out.gauge("healthhook_processor_lag_seconds",
            "How long the oldest inbox row not yet applied has waited (0 when caught up)", lag_seconds);
  return {};
}

Result<void> StoreMetrics::collect_families(PrometheusText& out, int64_t applied_seq) {
  if (applied_seq < family_scan_seq_) {  // `rebuild` reset the processor: count again
    applied_by_family_status_.clear();
    family_scan_seq_ = 0;
  }
  const int64_t scan_to = std::min(applied_seq, family_scan_seq_ + kFamilyScanRowsPerScrape);
  if (scan_to > family_scan_seq_) {
    auto counts = db_.prepare(
        "SELECT COALESCE(family, 'none'), status, COUNT(*) FROM deliveries WHERE seq > ?1 AND seq <= ?2 "
        "GROUP BY 1, 2");
    if (!counts) return fail(counts.error());
    counts->bind(1, family_scan_seq_).bind(2, scan_to);
    std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> found;
    for (;;) {
      auto row = counts->step();
      if (!row) return fail(row.error());  // nothing added: the same range is read again next time
      if (!*row) break;
      found.push_back({{std::string(counts->column_text(0)), std::string(counts->column_text(1))},
                       counts->column_int(2)});
    }
    counts->reset();
    for (const auto& [key, n] : found) applied_by_family_status_[key] += n;
    family_scan_seq_ = scan_to;
  }
  out.family("healthhook_inbox_deliveries", "gauge",
             "Inbox rows applied by the processor, by event family and status (counted from the database)");
  for (const auto& [key, n] : applied_by_family_status_) {
    const Label labels[] = {{"family", key.first}, {"status", key.second}};
    out.sample_labelled("healthhook_inbox_deliveries", labels, static_cast<double>(n));
  }
  return {};
}

Result<void> StoreMetrics::collect_jobs(PrometheusText& out) {
  auto counts = db_.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  if (!counts) return fail(counts.error());
  std::map<std::string, int64_t> by_state;
  for (auto state : kJobStates) by_state[std::string(state)] = 0;
  for (;;) {
    auto row = counts->step();
    if (!row) return fail(row.error());
    if (!*row) break;
    by_state[std::string(counts->column_text(0))] = counts->column_int(1);
  }
  counts->reset();
  out.family("healthhook_jobs", "gauge", "Follow-up fetch jobs by state");
  for (const auto& [state, n] : by_state) {
    const Label labels[] = {{"state", state}};
    out.sample_labelled("healthhook_jobs", labels, static_cast<double>(n));
  }
  return {};
}

Result<void> StoreMetrics::collect_sizes(PrometheusText& out) {
  auto pages = db_.query_int("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()");
  if (!pages) return fail(pages.error());
  out.gauge("healthhook_database_bytes", "Size of the SQLite database file (pages in use and free)",
            pages->value_or(0));
  out.gauge("healthhook_database_wal_bytes", "Size of the write-ahead log file (shrinks at checkpoints)",
            file_size(database_ + "-wal"));
  return {};
}

}  // namespace hh::metrics
