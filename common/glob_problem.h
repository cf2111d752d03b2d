#pragma once
// Event-type globs (SQLite's GLOB: `*`, `?`, `[...]`), as commands and settings take them
// (capture/query --event-type, [[forward]] events): one that can match nothing is refused,
// naming why, instead of silently selecting nothing.
#include <string>
#include <string_view>

namespace hh {

// Why `glob` can match nothing, or "" when it can match: a `[` whose set is never closed.
std::string glob_problem(std::string_view glob);

}  // namespace hh
