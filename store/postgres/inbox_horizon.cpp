#include "store/postgres/inbox_horizon.h"

#include <algorithm>

namespace hh::store {
namespace {

// Statements in this order, one pipeline: the candidate's writers still running, then L,
// then W (L before W: see the header).
constexpr const char* kWritersRunning =
    "SELECT count(*) FROM pg_locks WHERE locktype = 'virtualxid' AND virtualxid = ANY($1::text[])";
constexpr const char* kNewestDrawn = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM inbox_seq";
constexpr const char* kWritersNow =
    "SELECT coalesce(array_agg(DISTINCT v.virtualxid), '{}') FROM pg_locks AS r "
    "JOIN pg_locks AS v ON v.pid = r.pid AND v.locktype = 'virtualxid' "
    "WHERE r.locktype = 'relation' AND r.relation = 'inbox'::regclass AND r.mode = 'RowExclusiveLock' "
    "AND r.pid <> pg_backend_pid()";

}  // namespace

Result<int64_t> InboxHorizon::advance() {
  auto pipeline = pg::Pipeline::begin(*db_);
  if (!pipeline) return fail(pipeline);
  const bool waiting = !candidate_writers_.empty();
  if (waiting) {
    if (auto sent = pipeline->send(kWritersRunning, pg::Params().add(candidate_writers_)); !sent) return fail(sent);
  }
  if (auto sent = pipeline->send(kNewestDrawn); !sent) return fail(sent);
  if (auto sent = pipeline->send(kWritersNow); !sent) return fail(sent);
  auto results = pipeline->finish();
  if (!results) return fail(results, "inbox horizon");
  size_t at = 0;
  if (waiting && (*results)[at++].integer(0, 0) == 0) {
    horizon_ = std::max(horizon_, candidate_);
    candidate_writers_.clear();
  }
  const int64_t newest = (*results)[at++].integer(0, 0);
  const std::string_view writers = (*results)[at].text(0, 0);
  if (writers == "{}") {
    horizon_ = std::max(horizon_, newest);
    candidate_writers_.clear();
  } else if (candidate_writers_.empty() && newest > horizon_) {
    // Kept until its writers finish, not replaced by every probe: under steady load there
    // are always writers, and a candidate replaced each time would never be reached.
    candidate_ = newest;
    candidate_writers_ = writers;
  }
  return horizon_;
}

}  // namespace hh::store
