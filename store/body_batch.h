#pragma once
// Which deliveries one body-retention batch removes (store/body_retention.h), decided row
// by row over the candidates in seq order; the same rule for every backend
// (store/sqlite/sqlite_body_retention.cpp, store/postgres/pg_body_retention.cpp).
//
// Candidates are the applied deliveries after the last removed body. The batch stops at
// the first one received at or after the cutoff (received_at grows with seq: nothing
// older lies beyond it), after the one that brings its bodies to kMaxBodyBatchBytes, or
// after max_deliveries rows; `more` says whether a full batch may have left some behind.
#include <cstdint>

#include "store/body_retention.h"

namespace hh::store {

// A batch also ends after this many bytes of bodies (fetched pages can be tens of MB): the
// writer thread runs one batch between ingest commits.
inline constexpr int64_t kMaxBodyBatchBytes = 16 * 1024 * 1024;

class BodyBatch {
 public:
  enum class Verdict {
    take,       // remove this body, look at the next row
    take_last,  // remove this body, the batch is full
    stop,       // keep this one (too new) and stop
  };
  BodyBatch(int64_t received_before_ms, int64_t max_deliveries)
      : received_before_ms_(received_before_ms), max_deliveries_(max_deliveries) {}

  Verdict consider(int64_t received_at_ms, int64_t bytes) {
    ++rows_;
    if (received_at_ms >= received_before_ms_) {
      stopped_ = true;
      return Verdict::stop;
    }
    removed_.deliveries += 1;
    removed_.bytes += bytes;
    if (removed_.bytes >= kMaxBodyBatchBytes) {
      removed_.more = stopped_ = true;
      return Verdict::take_last;
    }
    return Verdict::take;
  }

  // After the last row considered (or the candidates ran out).
  RemovedBodies result() const {
    RemovedBodies removed = removed_;
    if (!stopped_ && rows_ == max_deliveries_) removed.more = true;
    return removed;
  }

 private:
  int64_t received_before_ms_, max_deliveries_;
  int64_t rows_ = 0;
  bool stopped_ = false;
  RemovedBodies removed_;
};

}  // namespace hh::store
