#pragma once
// Event-type globs (SQLite's GLOB: `*`, `?`, `[...]`), as commands and settings take them
// (capture/query --event-type, [[forward]] events): one that can match nothing is refused,
// naming why, instead of silently selecting nothing.
#include <string>
#include <string_view>

namespace hh {

// `glob` with each set written the shell's way, `[!...]` (none of these), in SQLite's
// spelling `[^...]`: SQLite reads `[!h]` as "! or h", so `daily.data.[!h]*` selected the
// heart rate it was meant to leave out. Other sets, and `!` elsewhere, are kept.
std::string glob_with_shell_negation(std::string_view glob);

// Why `glob` can match nothing, or "" when it can match: a `[` whose set is never closed.
std::string glob_problem(std::string_view glob);

}  // namespace hh
