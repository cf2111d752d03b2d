#pragma once
// What every message about a damaged SQLite file ends with: what happened and what to do
// (decision 077). SQLite's own "database disk image is malformed" says neither.

#include <string>
#include <string_view>

namespace hh::store {

// "the database file is damaged (`PRAGMA integrity_check` says where; restore it from a
// backup)", or with what found the damage in place of the first part.
inline std::string damaged_file(std::string_view found_by = "`PRAGMA integrity_check` says where") {
  return "the database file is damaged (" + std::string(found_by) + "; restore it from a backup)";
}

}  // namespace hh::store
