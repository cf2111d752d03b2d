#pragma once
// Copying a SQLite store into a PostgreSQL store (`healthhook migrate`, spec §9): every
// table, row for row and byte for byte (inbox bodies and headers, seq, message ids, series
// and change ids), then the target's sequences set past the copied maxima so new rows
// continue after them.
//
// This module is the one bridge between the two backends: it reads the source through
// store/sqlite/connection.h (sqlite::Connection/Statement) and writes through
// store/postgres/connection.h. No other code outside store/sqlite/ sees SQLite.
//
// How it copies: each table in key order, in batches; a batch is one PostgreSQL
// transaction holding a binary COPY of its rows and the update of its progress row in
// sqlite_copy_progress (a table this module creates in the target). Resuming reads that
// row: it says how many rows of each table are in and (for tables with one integer key)
// the last key, so an interrupted copy run again continues where it stopped and ends the
// same. A progress table rather than the target's max key: most derived tables have text
// or composite keys, which PostgreSQL and SQLite order differently (collations); the row
// count is exact whatever the order, as the source's order is SQLite's. The table stays
// after the copy: it records which source (a fingerprint of its row counts) the store came
// from, so a second run is a no-op and a run from another (or a since changed) source is
// refused rather than merged.
//
// Locks: the source's processing lock (store/sqlite/processing_lock.h: refused while a
// `serve`, `rebuild` or `replay` runs on it) and the target's (kProcessingLock, session
// level: refused while a PostgreSQL instance processes it, and no instance's processor can
// start on a half-copied store). The source is read in one read transaction: one snapshot.
// A copy stopped part-way (kill -9) holds no lock: every other command opening the target
// refuses it until a run has finished it (store/unfinished_copy.h), as the sequences are
// set past the copied rows only by the last transaction.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/database_location.h"

namespace hh::store {

struct SqliteCopyOptions {
  int64_t batch_rows = 10000;         // rows per transaction at most
  int64_t batch_bytes = 64ll << 20;   // and about this many bytes (one bigger row goes alone)
  int64_t stop_after_batches = 0;     // tests: stop (as if killed) after this many batches; 0 never
  // Progress lines (one per table, and about every 2 s while one is copied), no newline.
  std::function<void(const std::string&)> report = [](const std::string&) {};
};

struct SqliteCopySummary {
  int64_t tables = 0;
  int64_t rows_copied = 0;  // by this run
  int64_t rows_total = 0;   // in the source
  bool stopped = false;     // stop_after_batches reached: not finished
};

// Copies the migrated SQLite store at `source_path` (opened read-only) into the
// PostgreSQL store `target` (migrated if needed). Refusals name their reason: ErrorKind::in_use
// for a processing lock held, ErrorKind::data for a target holding rows of another store.
Result<SqliteCopySummary> copy_sqlite_to_postgres(const std::string& source_path, const Database& target,
                                                  const SqliteCopyOptions& options);

}  // namespace hh::store
