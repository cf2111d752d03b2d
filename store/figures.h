#pragma once
// What the store can tell about itself, for /metrics: positions in the inbox, outcomes by
// event family, follow-up jobs by state, sizes. Read on a connection of its own, never the
// writer's; each call is one short read.
//
// Opened by open_figures() (store/open_readers.h). Not thread-safe: one caller at a time
// (the metrics endpoint runs one scrape at a time).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace hh::store {

struct InboxPositions {
  int64_t last_seq = 0;     // newest inbox row
  int64_t applied_seq = 0;  // every row up to here has been applied
  std::optional<int64_t> oldest_unapplied_received_at_ms;
};

struct OutcomeCount {
  std::string family;  // "none" for deliveries without one
  std::string status;
  int64_t deliveries = 0;
};

struct StoreSizes {
  int64_t database_bytes = 0;
  int64_t log_bytes = 0;  // write-ahead log (SQLite: the -wal file)
};

class StoreFigures {
 public:
  virtual ~StoreFigures() = default;
  virtual Result<InboxPositions> positions() = 0;
  // Applied deliveries with after < seq <= upto, counted by family and status.
  virtual Result<std::vector<OutcomeCount>> outcome_counts(int64_t after, int64_t upto) = 0;
  // Follow-up jobs by state (only states that have jobs).
  virtual Result<std::map<std::string, int64_t>> jobs_by_state() = 0;
  virtual Result<StoreSizes> sizes() = 0;
};

}  // namespace hh::store
