#pragma once
// The PostgreSQL Store (store/store.h, spec §9): one write connection to a server that
// several healthhook instances share, and what the write side gets from it. Opened by
// store::open_store for a `database` that is a postgresql:// URI; the schema is created
// or migrated on open.
//
// What the server does for us: commits are durable when COMMIT returns (no CommitSync),
// and it checkpoints by itself (no Checkpointer): both are returned as null, and
// callers go on without them (store/durability.h).
#include <memory>
#include <string>
#include <vector>

#include "store/database_location.h"
#include "store/postgres/connection.h"
#include "store/store.h"
#include "store/store_options.h"

namespace hh::store {

class PgStore final : public Store {
 public:
  static Result<std::unique_ptr<PgStore>> open(const Database& database, const StoreOptions& options);

  Result<std::unique_ptr<Inbox>> open_inbox() override;
  Result<std::unique_ptr<ProcessingStore>> open_processing(Leadership leadership) override;
  bool can_process_alongside() const override { return true; }
  Result<std::unique_ptr<ProcessingStore>> open_processing_alongside(Leadership leadership) override;
  bool shared() const override { return true; }
  Result<std::unique_ptr<JobQueue>> open_job_queue() override;
  Result<std::unique_ptr<BodyRetention>> open_body_retention() override;
  Result<std::unique_ptr<CommitSync>> sync_commits_on_thread() override;
  Result<std::unique_ptr<Checkpointer>> start_checkpointer() override;
  Result<void> prefer_bulk_reads() override { return {}; }
  Result<void> check_pages() override { return {}; }
  std::string local_folder() const override { return ""; }

  // The write connection, for tests of the PostgreSQL backend.
  pg::Connection& write_connection() { return db_; }

 private:
  PgStore(Database database, pg::Connection db, StoreOptions options)
      : database_(std::move(database)), db_(std::move(db)), options_(std::move(options)) {}
  const Database database_;
  pg::Connection db_;
  const StoreOptions options_;
};

}  // namespace hh::store
