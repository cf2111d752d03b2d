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

// (Commands and settings refuse a glob that can match nothing: common/glob_problem.h.)
std::string glob_to_regex(std::string_view glob);

}  // namespace hh::store::schema
