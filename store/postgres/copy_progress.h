#pragma once
// What `healthhook migrate` leaves in its target (store/migrate/sqlite_to_postgres.h), and
// the check every other opener of a PostgreSQL store makes against an unfinished copy
// (store/unfinished_copy.h).
#include <string_view>

#include "common/result.h"
#include "store/database_location.h"
#include "store/postgres/connection.h"

namespace hh::store {

// The table migrate records its progress in; it stays after the copy (a second run is a
// no-op, another source is refused).
inline constexpr std::string_view kSqliteCopyProgressTable = "sqlite_copy_progress";

// The row (table_name) migrate puts in that table with it, before counting the source, and
// deletes in its last transaction, with the sequences: while it is there the copy is
// unfinished, whatever the other rows say (an empty source inbox leaves nothing else to
// tell, and there are no other rows while the source is counted). Copies made by earlier
// versions have none; the checks below cover them.
inline constexpr std::string_view kCopyUnfinishedMark = "(unfinished)";

// Refuses (ErrorKind::data, "<database>: " + kCopyUnfinished) a store holding a copy that
// has not finished: migrate's progress table is there and either it holds the unfinished
// mark, or a table's progress is
// short of the count the source fingerprint recorded for it, or the inbox holds rows past
// inbox_seq (the copy sets the sequences in its last transaction, after every row is in).
// Both hold for copies made by earlier versions too: a finished copy, whatever wrote it,
// has every table at its count and inbox_seq set past the copied rows, and a serve since
// only moved inbox_seq further. A store no migrate wrote costs one catalogue lookup. A role
// that may not read the progress table is refused too (ErrorKind::other, naming the table
// and the grant): it could not tell a half copy from a store.
Result<void> refuse_unfinished_copy(pg::Connection& db, const Database& database);

}  // namespace hh::store
