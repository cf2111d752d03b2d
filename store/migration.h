#pragma once
// One schema migration of a backend, compiled into the binary from its SQL file
// (store/CMakeLists.txt, healthhook_embed_migrations).
#include <cstdint>
#include <string_view>
#include <vector>

namespace hh::store {

struct Migration {
  std::string_view name;  // "001-inbox"
  std::string_view sql;
};

// The schema version that the migration named "NNN-`suffix`" brings (its place in `all`,
// from 1), found by name so that its number may differ between backends and change; the
// latest version when there is none.
inline int64_t version_with(const std::vector<Migration>& all, std::string_view suffix) {
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name.size() > suffix.size() && all[i].name.ends_with(suffix) &&
        all[i].name[all[i].name.size() - suffix.size() - 1] == '-') {
      return static_cast<int64_t>(i) + 1;
    }
  }
  return static_cast<int64_t>(all.size());
}

}  // namespace hh::store
