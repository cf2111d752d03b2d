#pragma once
// SQLite's GLOB in PostgreSQL's spelling (the read side's event-type filter, the outbox's
// [[forward]] events; store/schema/dialect.h): a glob as a POSIX regular expression (`~`) that
// matches the same strings: `*` any run of characters, `?` one character, `[...]` one of a
// set (`[^...]` none of it; `]` first is itself; `a-z` a range; `-` first or last is
// itself), every other character itself, case-sensitive, the whole string. A set left
// open matches nothing, as in SQLite. (sqlite3 src/func.c, patternCompare.)
#include <string>
#include <string_view>

namespace hh::store::schema {

std::string glob_to_regex(std::string_view glob);

// Why `glob` can match nothing, or "" when it can match: a `[` whose set is never closed.
// Commands refuse such a pattern instead of silently selecting nothing.
std::string glob_problem(std::string_view glob);

}  // namespace hh::store::schema
