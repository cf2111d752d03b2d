#pragma once
// The fetcher's only way to write (spec §4: one writer owns the write connection). Each
// call posts one task to the writer thread (InboxWriter::post), which runs it between
// group commits on the write connection, and resumes the awaiting coroutine on its own
// executor with the result. While a task is pending it keeps that executor's io_context
// busy, so io_context::run() does not return under it.
//
// Lifetime: `writer`, `inbox` and `jobs` must outlive this object, and the writer must
// keep running until every awaited call has returned (serve stops the fetcher before the
// writer).
//
// Arguments are copied before the call returns, so they need not outlive the await.
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/inbox_writer.h"
#include "store/jobs/job_queue.h"
#include "store/inbox.h"

namespace hh::fetcher {

class WriterLink {
 public:
  WriterLink(store::InboxWriter& writer, store::Inbox& inbox, store::JobQueue& jobs)
      : writer_(writer), inbox_(inbox), jobs_(jobs) {}

  boost::asio::awaitable<Result<int64_t>> requeue_interrupted(int64_t now_ms, int64_t max_attempts);
  boost::asio::awaitable<Result<std::vector<store::ClaimedJob>>> claim_due(int64_t now_ms, size_t limit,
                                                                            const std::vector<int64_t>& busy);

  struct StoredPage {
    bool superseded = false;   // the job was re-triggered meanwhile: nothing was written
    bool duplicate = false;    // the message id was already in the inbox (nothing new stored)
    int64_t seq = 0;
  };
  // Appends `page` to the inbox and records `progress`, in ONE transaction; then wakes the
  // writer's background work so the processor applies the row promptly.
  boost::asio::awaitable<Result<StoredPage>> store_page(const store::ClaimedJob& job,
                                                        const std::shared_ptr<const store::NewDelivery>& page,
                                                        const store::JobProgress& progress, int64_t now_ms);
  // Appends `row` (a fetched page that belongs to no job: the provider list) to the inbox in
  // its own transaction, then wakes the writer's background work.
  boost::asio::awaitable<Result<StoredPage>> store_row(const std::shared_ptr<const store::NewDelivery>& row);
  boost::asio::awaitable<Result<bool>> record_failure(const store::ClaimedJob& job,
                                                      const store::RetryDecision& decision, const std::string& error,
                                                      int64_t now_ms);
  boost::asio::awaitable<Result<bool>> release(const store::ClaimedJob& job, int64_t now_ms);
  // JobQueue::renew_lease.
  boost::asio::awaitable<Result<bool>> renew_lease(const store::ClaimedJob& job, int64_t now_ms);

 private:
  store::InboxWriter& writer_;
  store::Inbox& inbox_;
  store::JobQueue& jobs_;
};

}  // namespace hh::fetcher
