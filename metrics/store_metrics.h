#pragma once
// Metrics read from the database at scrape time, on a read connection of its own (WAL:
// never blocks the writer). Families written:
//
//   healthhook_inbox_last_seq, healthhook_processor_applied_seq
//   healthhook_processor_lag_deliveries   max(seq) - the applied position (PostgreSQL: the lowest shard's)
//   healthhook_processor_lag_seconds      age of the oldest delivery not yet applied (0: none)
//   healthhook_inbox_deliveries{family,status}   applied inbox rows by event family and status
//   healthhook_jobs{state}                follow-up jobs by state (queued, running, done, dead, …)
//   healthhook_database_bytes, healthhook_database_wal_bytes
//   healthhook_store_metrics_ok           1 when every read of this scrape succeeded
//
// Cost per scrape: a few index lookups, a GROUP BY over the jobs index, and the inbox rows
// applied since the previous scrape: the family/status counts are kept here and advanced
// incrementally (rows at or below applied_seq no longer change), at most
// kFamilyScanRowsPerScrape rows per scrape, so the first scrapes after a start with a large
// inbox catch up in steps instead of one long scan.
//
// A database that cannot be reached, or does not answer within the reply timeout the store
// was opened with (store/database_location.h), ends the scrape's reads at the first one:
// the families not read are left out and healthhook_store_metrics_ok is 0.
//
// Not thread-safe: the metrics endpoint runs one scrape at a time.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "common/result.h"
#include "metrics/prometheus_text.h"
#include "store/database_location.h"
#include "store/figures.h"

namespace hh::metrics {

inline constexpr int64_t kFamilyScanRowsPerScrape = 100000;

class StoreMetrics {
 public:
  // Opens `database` read-only (it must exist and be migrated: open it for writing first).
  static Result<std::unique_ptr<StoreMetrics>> open(const store::Database& database);

  void collect(PrometheusText& out);

 private:
  explicit StoreMetrics(std::unique_ptr<store::StoreFigures> figures) : figures_(std::move(figures)) {}
  Result<void> collect_lag(PrometheusText& out, int64_t& applied_seq);
  Result<void> collect_families(PrometheusText& out, int64_t applied_seq);
  Result<void> collect_jobs(PrometheusText& out);
  Result<void> collect_sizes(PrometheusText& out);

  std::unique_ptr<store::StoreFigures> figures_;
  std::map<std::pair<std::string, std::string>, int64_t> applied_by_family_status_;
  int64_t family_scan_seq_ = 0;  // rows up to here are in applied_by_family_status_
  bool last_ok_ = true;          // to log a failing read once, not every scrape
};

}  // namespace hh::metrics
