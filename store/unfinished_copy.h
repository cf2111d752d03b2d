#pragma once
// An unfinished `healthhook migrate` copy, and the words every command refuses it with.
//
// migrate copies a SQLite store into PostgreSQL one batch (one transaction) at a time and
// sets the target's sequences (inbox_seq first of all) only at its very end
// (store/migrate/sqlite_to_postgres.h). A copy killed in between leaves a target that looks
// like a store: `serve` would start, apply the half-copied inbox and answer every new
// delivery 503 (inbox_seq hands out seq 1 again), and the rows it wrote would make the
// same migrate fail for ever when run again. So every command that opens a PostgreSQL
// store to write, process or read it refuses one holding an unfinished copy
// (store/postgres/copy_progress.h); only migrate itself opens it, to finish the copy.
#include <string_view>

namespace hh::store {

// Follows "<database>: " (docs/troubleshooting.md quotes it).
inline constexpr std::string_view kCopyUnfinished =
    "holds an unfinished `healthhook migrate` copy from a SQLite store: run the same migrate command again to finish "
    "it (or drop and re-create the database)";

}  // namespace hh::store
