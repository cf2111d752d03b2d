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

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<std::unique_ptr<Inbox>> open_inbox() = 0;
  // Takes the store's processing lock (processing_store.h): fails while another process
  // applies this inbox.
  virtual Result<std::unique_ptr<ProcessingStore>> open_processing() = 0;
  virtual Result<std::unique_ptr<JobQueue>> open_job_queue() = 0;
  // `[retention] body_days`: removing old bodies, as the writer's background work.
  virtual Result<std::unique_ptr<BodyRetention>> open_body_retention() = 0;

  // Ingest commits on the write connection stop syncing inside the commit; the returned
  // CommitSync syncs after them (hand it to InboxWriter::sync_commits_with). Call before
  // open_processing(), whose live steps read the connection's sync level.
  virtual Result<std::unique_ptr<CommitSync>> sync_commits_on_thread() = 0;
  // A checkpointer at CheckpointPace::serving, to run as the writer's background work.
  virtual Result<std::unique_ptr<Checkpointer>> start_checkpointer() = 0;

  // The caller is about to read most of the store (rebuild): the backend may read in
  // bulk from now on.
  virtual Result<void> prefer_bulk_reads() = 0;

  // The local folder whose free space the store grows into ("" when it is not local):
  // the writer refuses deliveries before the disk is full.
  virtual std::string local_folder() const = 0;
};

}  // namespace hh::store
