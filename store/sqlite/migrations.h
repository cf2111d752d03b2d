#pragma once
// The schema's migrations, in order: migration i (0-based) brings user_version from i to
// i + 1. Each is applied with its user_version bump in one transaction.
#include <string_view>
#include <vector>

namespace hh::store {

struct Migration {
  std::string_view name;  // "001-inbox"
  std::string_view sql;
};

const std::vector<Migration>& migrations();

}  // namespace hh::store
