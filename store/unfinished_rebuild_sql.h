#pragma once
// How every backend reads the unfinished-rebuild mark (store/unfinished_rebuild.h): one
// statement, the same SQL on SQLite and PostgreSQL.
#include <string_view>

namespace hh::store {

// One row, the mark's inbox row, while a row up to it is still to be applied again; no row
// when the derived tables are whole. A mark with nothing left to apply up to it (an
// erasure removed those rows after the rebuild was interrupted) is no longer unfinished:
// the step that would have cleared it has nothing to read, and the next mark or step
// replaces it. A row whose body is gone (retention, or the placeholder an erasure leaves to
// keep the newest seq taken: store/sqlite/sqlite_erasure.cpp) derives nothing again, so it
// is not left to apply either. (On PostgreSQL applied_seq is the lowest shard position: a shard that has
// applied further still counts as behind until all have; never the other way.)
inline constexpr std::string_view kUnfinishedRebuildSql =
    "SELECT s.rebuild_through FROM processor_state AS s WHERE s.id = 1 AND s.rebuild_through IS NOT NULL AND "
    "EXISTS (SELECT 1 FROM inbox AS i WHERE i.seq > s.applied_seq AND i.seq <= s.rebuild_through AND "
    "NOT EXISTS (SELECT 1 FROM removed_bodies AS r WHERE r.seq = i.seq))";

}  // namespace hh::store
