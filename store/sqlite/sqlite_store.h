#pragma once
// The SQLite Store (store/store.h): one database file, its write connection, and what
// the write side gets from it. Opened by store::open_store for a `database` that is a
// file path.
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/sqlite/connection.h"
#include "store/store.h"
#include "store/store_options.h"

namespace hh::store {

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) and migrates the database at `path`.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path, const StoreOptions& options);
  // Process-wide SQLite settings; before the first connection (store::prepare_backends).
  static void prepare_process();

  Result<std::unique_ptr<Inbox>> open_inbox() override;
  // One SQLite file has one server: a lock held elsewhere fails whatever `leadership` says.
  Result<std::unique_ptr<ProcessingStore>> open_processing(Leadership leadership) override;
  bool can_process_alongside() const override { return false; }
  Result<std::unique_ptr<ProcessingStore>> open_processing_alongside(Leadership) override {
    return fail(ErrorKind::unavailable, "SQLite has one writer: processing runs on the writer thread");
  }
  bool shared() const override { return false; }
  Result<std::unique_ptr<JobQueue>> open_job_queue() override;
  Result<std::unique_ptr<BodyRetention>> open_body_retention() override;
  Result<std::unique_ptr<CommitSync>> sync_commits_on_thread() override;
  Result<std::unique_ptr<Checkpointer>> start_checkpointer() override;
  Result<void> prefer_bulk_reads() override;
  Result<void> check_pages() override;
  std::string local_folder() const override;

  // The write connection, for tests of the SQLite backend.
  sqlite::Connection& write_connection() { return db_; }

 private:
  SqliteStore(std::string path, sqlite::Connection db, std::vector<ForwardRule> forward_rules)
      : path_(std::move(path)), db_(std::move(db)), forward_rules_(std::move(forward_rules)) {}
  const std::string path_;
  sqlite::Connection db_;
  const std::vector<ForwardRule> forward_rules_;  // what serve forwards: the writer makes their entries
};

}  // namespace hh::store
