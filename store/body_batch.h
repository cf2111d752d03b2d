#pragma once
// Which deliveries one body-retention batch removes (store/body_retention.h), decided row
// by row over the candidates in seq order; the same rule for every backend
// (store/sqlite/sqlite_body_retention.cpp, store/postgres/pg_body_retention.cpp).
//
// Candidates are the applied deliveries after the last removed body. The batch stops at
// the first one received at or after the cutoff (received_at grows with seq: nothing
// older lies beyond it), after the one that brings its bodies to kMaxBodyBatchBytes, or
// after max_deliveries rows; `more` says whether a full batch may have left some behind.
#include <cstddef>
#include <cstdint>
#include <vector>

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

// Where one step of the late sweep (BodyRetention::remove_late_bodies) ends, from the
// received_at of the rows it read in received_at order (at most `max_rows`): fewer rows
// than asked for and the sweep is done; else the rows of the last millisecond are left to
// the next step, which starts at it (unless that millisecond is the whole step: then all
// are taken and the next starts after it). Every backend cuts its steps the same way.
struct LateStepEnd {
  size_t rows = 0;  // the rows of this step: the first `rows` read
  int64_t next_from_ms = 0;
  bool done = false;
};

inline LateStepEnd late_step_end(const std::vector<int64_t>& received_at, int64_t max_rows) {
  if (static_cast<int64_t>(received_at.size()) < max_rows) return {received_at.size(), 0, true};
  const int64_t last = received_at.back();
  size_t rows = received_at.size();
  while (rows > 0 && received_at[rows - 1] == last) --rows;
  if (rows == 0) return {received_at.size(), last + 1, false};
  return {rows, last, false};
}

}  // namespace hh::store
