#pragma once
// PostgreSQL's processing shards (docs/decisions/050): every inbox row belongs to one of
// kShardCount shards, by the user its derived rows are written under, and each shard is
// applied by one session at a time, in seq order. Latest-wins rules are per user, so
// sessions that own different shards apply at once without changing what the tables end
// up holding.
//
// The shard is computed here, in one place, both by the writer (which stores it in
// inbox.shard) and by the sessions that read a row stored without one (inbox.shard NULL:
// rows stored before migration 008, copied by `healthhook migrate`, or written by an
// instance of the previous version), so the two always agree.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hh::store::pgshard {

inline constexpr int kShardCount = 16;

// The shard of a user (nullopt or "": shard 0). FNV-1a of the id's bytes: stable across
// versions and machines, as a stored shard must be.
int shard_of_user(std::optional<std::string_view> user_id);

// The shard of an inbox row, from its content (rows::rows_user_of).
int shard_of_row(std::string_view origin, std::string_view headers_json, std::string_view body);

// The shards a session owns and, for each, the position up to which it is applied.
struct OwnedShards {
  std::array<bool, kShardCount> owned{};
  std::array<int64_t, kShardCount> applied{};  // valid for owned shards

  bool all() const;
  int count() const;
  // The owned shards as a PostgreSQL array literal ("{0,3,7}"), for a bigint[] parameter.
  std::string array_literal() const;
  // Whether the row `seq` of `shard` is still to be applied by this owner.
  bool wants(int shard, int64_t seq) const {
    return owned[static_cast<size_t>(shard)] && seq > applied[static_cast<size_t>(shard)];
  }
  // Whether any owned shard is applied past `seq` (then a row's shard must be known to
  // decide; otherwise every owned row above it is wanted).
  bool any_ahead_of(int64_t seq) const;
};

}  // namespace hh::store::pgshard
