#pragma once
// What the follow-up fetcher reads outside the writer thread, on a connection of its own:
// when the next queued job is due, and the newest stored body of a kind of fetched row
// (the provider list, so that an unchanged list is not stored again).
//
// Opened by open_follow_up_reads() (store/open_readers.h). Used by one thread (the
// fetcher's io thread).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::store {

class FollowUpReads {
 public:
  virtual ~FollowUpReads() = default;
  // The earliest next_attempt_at (Unix ms) of a queued job or, on PostgreSQL, lease end of a
  // running one (another instance's that died: the claim takes it over then); nullopt
  // when there is neither.
  virtual Result<std::optional<int64_t>> next_due_at() = 0;
  // The body of the newest inbox row whose message id starts with `prefix`.
  virtual Result<std::optional<std::string>> newest_body_with_id_prefix(std::string_view prefix) = 0;
};

}  // namespace hh::store
