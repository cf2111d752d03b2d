#include "store/postgres/processing_shards.h"

#include "rows/delivery_user.h"

namespace hh::store::pgshard {

int shard_of_user(std::optional<std::string_view> user_id) {
  if (!user_id || user_id->empty()) return 0;
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : *user_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return static_cast<int>(hash % kShardCount);
}

int shard_of_row(std::string_view origin, std::string_view headers_json, std::string_view body) {
  const auto user = rows::rows_user_of(origin, headers_json, body);
  return user ? shard_of_user(*user) : 0;
}

bool OwnedShards::all() const { return count() == kShardCount; }

int OwnedShards::count() const {
  int n = 0;
  for (const bool o : owned) n += o ? 1 : 0;
  return n;
}

std::string OwnedShards::array_literal() const {
  std::string list = "{";
  for (int s = 0; s < kShardCount; ++s) {
    if (!owned[static_cast<size_t>(s)]) continue;
    if (list.size() > 1) list += ',';
    list += std::to_string(s);
  }
  return list + "}";
}

bool OwnedShards::any_ahead_of(int64_t seq) const {
  for (size_t s = 0; s < owned.size(); ++s) {
    if (owned[s] && applied[s] >= seq) return true;
  }
  return false;
}

}  // namespace hh::store::pgshard
