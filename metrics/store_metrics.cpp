#include "metrics/store_metrics.h"

#include <chrono>
#include <vector>

#include "common/log.h"
#include "common/timestamp.h"
#include "store/open_readers.h"

namespace hh::metrics {
namespace {

// Follow-up job states (store/jobs/job_queue.h), written even when zero so that alerts on
// e.g. state="dead" have a series to look at.
constexpr std::string_view kJobStates[] = {"queued", "running", "done", "dead"};

}  // namespace

Result<std::unique_ptr<StoreMetrics>> StoreMetrics::open(const store::Database& database) {
  auto figures = store::open_figures(database);
  if (!figures) return fail(figures, "metrics");
  return std::unique_ptr<StoreMetrics>(new StoreMetrics(std::move(*figures)));
}

void StoreMetrics::collect(PrometheusText& out) {
  std::string error;
  // Once the database is found unavailable (gone, or not answering within the reply
  // timeout), the scrape reads nothing more from it: each read would wait as long again.
  bool unavailable = false;
  auto note = [&error, &unavailable](const Result<void>& result) {
    if (!result && error.empty()) error = result.error();
    if (result.error_kind() == ErrorKind::unavailable) unavailable = true;
  };
  int64_t applied_seq = 0;
  const Result<void> lag = collect_lag(out, applied_seq);
  note(lag);
  if (lag) note(collect_families(out, applied_seq));  // needs applied_seq
  if (!unavailable) note(collect_jobs(out));
  if (!unavailable) note(collect_sizes(out));
  out.gauge("healthhook_store_metrics_ok", "1 when every database read of this scrape succeeded",
            int64_t{error.empty() ? 1 : 0});
  if (!error.empty() && last_ok_) log::warn("metrics_database_read_failed").str("error", error);
  last_ok_ = error.empty();
}

Result<void> StoreMetrics::collect_lag(PrometheusText& out, int64_t& applied_seq) {
  auto positions = figures_->positions();
  if (!positions) return fail(positions);
  const int64_t last_seq = positions->last_seq;
  applied_seq = positions->applied_seq;
  // The oldest delivery the processor has not applied yet: its wait is the lag in time.
  const auto& oldest = positions->oldest_unapplied_received_at_ms;
  const double lag_seconds = oldest ? std::max<int64_t>(0, unix_now_ms() - *oldest) / 1000.0 : 0.0;
  out.gauge("healthhook_inbox_last_seq", "Newest inbox sequence number", last_seq);
  // PostgreSQL's position may pass the newest row: a sequence number a duplicate took (and
  // left unused) is applied as well. Shown no further than the newest row.
  out.gauge("healthhook_processor_applied_seq", "Every inbox row up to this seq has been applied",
            std::min(applied_seq, last_seq));
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
    auto counts = figures_->outcome_counts(family_scan_seq_, scan_to);
    if (!counts) return fail(counts);  // nothing added: the same range is read again next time
    for (const auto& count : *counts) applied_by_family_status_[{count.family, count.status}] += count.deliveries;
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
  auto counts = figures_->jobs_by_state();
  if (!counts) return fail(counts);
  std::map<std::string, int64_t> by_state;
  for (auto state : kJobStates) by_state[std::string(state)] = 0;
  for (const auto& [state, n] : *counts) by_state[state] = n;
  out.family("healthhook_jobs", "gauge", "Follow-up fetch jobs by state");
  for (const auto& [state, n] : by_state) {
    const Label labels[] = {{"state", state}};
    out.sample_labelled("healthhook_jobs", labels, static_cast<double>(n));
  }
  return {};
}

Result<void> StoreMetrics::collect_sizes(PrometheusText& out) {
  auto sizes = figures_->sizes();
  if (!sizes) return fail(sizes);
  out.gauge("healthhook_database_bytes", "Size of the database file (pages in use and free)", sizes->database_bytes);
  out.gauge("healthhook_database_wal_bytes", "Size of the write-ahead log file (shrinks at checkpoints)",
            sizes->log_bytes);
  return {};
}

}  // namespace hh::metrics
