#pragma once
// An open store (store/open_store.h opens one): what the write side of the program gets
// from it. The receiver appends through the Inbox (on the writer thread), the processor
// applies through the ProcessingStore, the fetcher queues through the JobQueue, and
// Durability-related helpers keep commits cheap and durable.
//
// Everything handed out uses the store's one write connection: use it on the thread that
// owns that connection (the writer thread in `serve`), and destroy it before the Store.
#include <memory>
#include <string>

#include "common/result.h"
#include "store/body_retention.h"
#include "store/durability.h"
#include "store/inbox.h"
#include "store/jobs/job_queue.h"
#include "store/processing_store.h"

namespace hh::store {

// Whether open_processing() must hold the processing lock at once (`rebuild`, `replay`),
// or may wait for it (`serve` on a store several instances share: one applies the inbox,
// the others stand by and take over when it stops; ProcessingStore::take_lead()).
enum class Leadership { now, when_free };

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<std::unique_ptr<Inbox>> open_inbox() = 0;
  // Takes the store's processing lock (processing_store.h): with Leadership::now, fails
  // (ErrorKind::in_use) while another process or instance applies this inbox.
  virtual Result<std::unique_ptr<ProcessingStore>> open_processing(Leadership leadership = Leadership::now) = 0;
  // Whether processing can run beside the writer, on a connection and a thread of its own
  // (PostgreSQL). Where the store has one writer (SQLite), processing shares the writer's
  // connection and thread.
  virtual bool can_process_alongside() const = 0;
  // open_processing() on a connection of its own, for that thread: not bound to the write
  // connection's thread (the rest of this interface is). ErrorKind::unavailable where
  // can_process_alongside() is false.
  virtual Result<std::unique_ptr<ProcessingStore>> open_processing_alongside(Leadership leadership) = 0;
  // Several instances may serve this store at once (PostgreSQL): deliveries they store
  // appear in the inbox without this process's writer, so background work should look
  // for them often.
  virtual bool shared() const = 0;
  virtual Result<std::unique_ptr<JobQueue>> open_job_queue() = 0;
  // `[retention] body_days`: removing old bodies, as the writer's background work.
  virtual Result<std::unique_ptr<BodyRetention>> open_body_retention() = 0;

  // Ingest commits on the write connection stop syncing inside the commit; the returned
  // CommitSync syncs after them (hand it to InboxWriter::sync_commits_with). Call before
  // open_processing(), whose live steps read the connection's sync level. Null when the
  // backend needs none (PostgreSQL: each COMMIT is durable when it returns); a failure is
  // a failure to start it (then each commit syncs).
  virtual Result<std::unique_ptr<CommitSync>> sync_commits_on_thread() = 0;
  // A checkpointer at CheckpointPace::serving, to run as the writer's background work.
  // Null when the backend needs none (PostgreSQL checkpoints by itself).
  virtual Result<std::unique_ptr<Checkpointer>> start_checkpointer() = 0;

  // The caller is about to read most of the store (rebuild): the backend may read in
  // bulk from now on.
  virtual Result<void> prefer_bulk_reads() = 0;

  // Checks every page of a local file (SQLite's quick_check) before rebuild trusts its walk
  // of the inbox: a damaged page can end or skip that walk without an error, and rebuild
  // would then replace the derived tables with fewer rows. Fails (ErrorKind::io) naming the
  // first problem. PostgreSQL: nothing (the server reads its own pages).
  virtual Result<void> check_pages() = 0;

  // The local folder whose free space the store grows into ("" when it is not local):
  // the writer refuses deliveries before the disk is full.
  virtual std::string local_folder() const = 0;
};

}  // namespace hh::store
