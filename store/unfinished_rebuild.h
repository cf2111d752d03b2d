#pragma once
// An unfinished rebuild, and the words every surface says it with.
//
// `rebuild` empties the derived tables and applies the inbox again. Until it has applied
// every delivery it emptied them for, the tables are incomplete while every delivery keeps
// its outcome ('processed'): a partial answer would look whole. So the reset records, in
// the transaction that empties the tables, the newest inbox seq of that moment
// (`processor_state.rebuild_through`, SQLite 018 / PostgreSQL 014), and the step that
// applies it again clears it, in the transaction that finishes the work. A rebuild killed
// in between (kill -9, power loss) leaves the mark on disk; `serve` goes on from the last
// committed step, a new `rebuild` starts over, and the mark goes with their last step (or
// counts no more once no row up to it is left to apply: an erasure removed them;
// store/unfinished_rebuild_sql.h).
//
// While it is set (ProcessingStore::unfinished_rebuild(), ReadStore::unfinished_rebuild()):
// `serve`'s /readyz is not ready and its read API answers 503 with kRebuildUnfinishedServing;
// `healthhook query` refuses with kRebuildUnfinishedOffline; `migrate` refuses such a
// source. The deliveries and their outcomes are intact throughout: only derived rows are
// missing.
#include <string_view>

namespace hh::store {

// What every message starts with (docs/troubleshooting.md quotes it).
inline constexpr std::string_view kRebuildUnfinished = "rebuild unfinished: the derived tables are incomplete";

// `serve` re-derives them from its start: /readyz's reason, the read API's 503.
inline constexpr std::string_view kRebuildUnfinishedServing =
    "rebuild unfinished: the derived tables are incomplete until serve has applied the inbox again";

// Commands that read the store without `serve` (query, migrate): what to do.
inline constexpr std::string_view kRebuildUnfinishedOffline =
    "rebuild unfinished: the derived tables are incomplete (a rebuild was interrupted or runs now); run `healthhook "
    "rebuild`, or start serve, to apply the inbox again";

}  // namespace hh::store
