#include "store/sqlite/sqlite_store.h"

#include <algorithm>

#include <sqlite3.h>

#include <filesystem>

#include "store/damaged_file.h"
#include "store/sqlite/database.h"
#include "store/sqlite/sqlite_body_retention.h"
#include "store/sqlite/jobs/job_store.h"
#include "store/sqlite/outbox/outbox_entries.h"
#include "store/sqlite/sqlite_inbox.h"
#include "store/sqlite/sqlite_processing_store.h"
#include "store/sqlite/wal_checkpointer.h"
#include "store/sqlite/wal_sync.h"

namespace hh::store {
namespace {

// SQLite's own autocheckpoint threshold (pages): a short WAL keeps reads of the read API
// fast (docs/decisions/002-checkpointer-thread.md).
constexpr int kServingCheckpointFrames = 1000;
// Reads of pages through mmap rather than one pread() each, for a rebuild (the old tables
// are walked to be freed, the new ones read while inserting).
constexpr int64_t kBulkReadMmapBytes = int64_t{1} << 30;

}  // namespace

void SqliteStore::prepare_process() {
  // SQLite's allocation statistics take one process-wide mutex on every malloc and free,
  // which every thread with a connection (writer, checkpointer, readers, a rebuild's
  // parser) then contends for; nothing here reads them. Must come before the first
  // connection (SQLite refuses it later, harmlessly).
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path, const StoreOptions& options) {
  auto db = open_for_writing(path, options);
  if (!db) return fail(db);
  auto started = start_forward_positions(*db, options.forward_rules, options.forwarding_configured);
  if (!started) return fail(started);
  if (options.refuse_while_sender_makes_entries) {
    auto behind = db->query_int("SELECT count(*) FROM forward_positions WHERE writer_makes = 0");
    if (!behind) return fail(behind);
    if (behind->value_or(0) > 0) {
      return fail(ErrorKind::data,
                  "a [[forward]] destination's sender is making its entries from the inbox (the backend was "
                  "behind): it would forward these deliveries, which an offline replay never does; run serve until "
                  "healthhook_forward_unmade_deliveries is 0 and the log says forward_entries_handed_back, or "
                  "replay --to the running server");
    }
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(path, std::move(*db), options.forward_rules));
}

Result<std::unique_ptr<Inbox>> SqliteStore::open_inbox() {
  auto entries = WriterEntries::create(db_, forward_rules_, ForwardMode::deliveries);
  if (!entries) return fail(entries);
  auto inbox = SqliteInbox::create(db_, std::move(*entries));
  if (!inbox) return fail(inbox);
  return std::unique_ptr<Inbox>(new SqliteInbox(std::move(*inbox)));
}

Result<std::unique_ptr<ProcessingStore>> SqliteStore::open_processing(Leadership) {
  return open_sqlite_processing(db_, forward_rules_);
}

Result<std::unique_ptr<JobQueue>> SqliteStore::open_job_queue() {
  auto jobs = JobStore::create(db_);
  if (!jobs) return fail(jobs);
  return std::unique_ptr<JobQueue>(new JobStore(std::move(*jobs)));
}

Result<std::unique_ptr<BodyRetention>> SqliteStore::open_body_retention() {
  return open_sqlite_body_retention(db_);
}

// The write connection commits with synchronous = NORMAL (SQLite writes the WAL frames but
// does not sync them) and the WalSync syncs the "-wal" file after the commits (wal_sync.h).
Result<std::unique_ptr<CommitSync>> SqliteStore::sync_commits_on_thread() {
  if (auto opened = db_.open_wal(); !opened) return fail(opened);  // the "-wal" file exists
  // SQLite keeps the WAL beside the file a symbolic link names, not beside the link.
  std::error_code ec;
  const auto real = std::filesystem::canonical(path_, ec);
  auto sync = WalSync::open((ec ? path_ : real.string()) + "-wal");
  if (!sync) return fail(sync);
  if (auto relaxed = db_.exec("PRAGMA synchronous = NORMAL"); !relaxed) return fail(relaxed);
  return std::unique_ptr<CommitSync>(std::move(*sync));
}

Result<std::unique_ptr<Checkpointer>> SqliteStore::start_checkpointer() {
  auto started = WalCheckpointer::start(db_, path_, kServingCheckpointFrames);
  if (!started) return fail(started);
  return std::unique_ptr<Checkpointer>(std::move(*started));
}

Result<void> SqliteStore::prefer_bulk_reads() {
  return db_.exec("PRAGMA mmap_size = " + std::to_string(kBulkReadMmapBytes));
}

Result<void> SqliteStore::check_pages() {
  auto check = db_.prepare("PRAGMA quick_check(1)");  // the first problem is enough
  if (!check) return fail(check, path_);
  auto row = check->step();
  if (!row) return fail(row, path_);  // SQLite's "malformed" comes with_advice already
  std::string verdict = *row ? std::string(check->column_text(0)) : "ok";
  check->reset();
  // One line: "*** in database main ***\nOn tree page 89 cell 0: Rowid 16383 out of order".
  if (const std::string heading = "*** in database main ***\n"; verdict.starts_with(heading)) {
    verdict.erase(0, heading.size());
  }
  std::replace(verdict.begin(), verdict.end(), '\n', ' ');
  if (verdict == "ok") return {};
  return fail(ErrorKind::io, path_ + ": " + damaged_file("PRAGMA quick_check: " + verdict));
}

std::string SqliteStore::local_folder() const {
  return std::filesystem::absolute(path_).parent_path().string();
}

}  // namespace hh::store
