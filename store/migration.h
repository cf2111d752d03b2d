#pragma once
// One schema migration of a backend, compiled into the binary from its SQL file
// (store/CMakeLists.txt, healthhook_embed_migrations).
#include <string_view>

namespace hh::store {

struct Migration {
  std::string_view name;  // "001-inbox"
  std::string_view sql;
};

}  // namespace hh::store
