#include "fetcher/writer_link.h"

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>

namespace hh::fetcher {
namespace {

namespace net = boost::asio;

// Runs `task` on the writer thread; the awaiting coroutine resumes on its executor.
template <typename T>
net::awaitable<T> on_writer(store::InboxWriter& writer, std::function<T()> task) {
  auto executor = co_await net::this_coro::executor;
  auto initiate = [&writer, executor](auto handler, std::function<T()> work) {
    // InboxWriter::post takes a copyable std::function; the coroutine's handler is
    // move-only, so it travels in a shared_ptr.
    auto shared_handler = std::make_shared<decltype(handler)>(std::move(handler));
    auto busy = std::make_shared<net::executor_work_guard<net::any_io_executor>>(executor);
    writer.post([shared_handler, busy, executor, work = std::move(work)] {
      auto result = std::make_shared<T>(work());
      net::post(executor, [shared_handler, busy, result]() mutable { (*shared_handler)(std::move(*result)); });
    });
  };
  auto operation = net::async_initiate<const net::use_awaitable_t<>&, void(T)>(initiate, net::use_awaitable,
                                                                               std::move(task));
  co_return co_await std::move(operation);
}

}  // namespace

// These are plain functions returning on_writer's awaitable, not coroutines: the
// arguments are copied into the task here, outside any co_await expression (g++ 12
// destroys class-type temporaries of a co_await expression twice, GCC PR 100611).

net::awaitable<Result<int64_t>> WriterLink::requeue_interrupted(int64_t now_ms, int64_t max_attempts) {
  std::function<Result<int64_t>()> task = [this, now_ms, max_attempts] {
    return jobs_.requeue_interrupted(now_ms, max_attempts);
  };
  return on_writer<Result<int64_t>>(writer_, std::move(task));
}

net::awaitable<Result<std::vector<store::ClaimedJob>>> WriterLink::claim_due(int64_t now_ms, size_t limit,
                                                                           const std::vector<int64_t>& busy) {
  std::function<Result<std::vector<store::ClaimedJob>>()> task = [this, now_ms, limit, busy] {
    return jobs_.claim_due(now_ms, limit, busy);
  };
  return on_writer<Result<std::vector<store::ClaimedJob>>>(writer_, std::move(task));
}

net::awaitable<Result<WriterLink::StoredPage>> WriterLink::store_page(
    const store::ClaimedJob& job, const std::shared_ptr<const store::NewDelivery>& page,
    const store::JobProgress& progress, int64_t now_ms) {
  std::function<Result<StoredPage>()> task = [this, job, page, progress, now_ms]() -> Result<StoredPage> {
    StoredPage stored;
    const store::NewDelivery* batch[] = {page.get()};
    auto appended = inbox_.append_with(batch, [&](std::span<const store::Appended> rows) -> Result<void> {
      auto recorded = jobs_.record_progress_in_transaction(job, progress, now_ms);
      if (!recorded) return fail(recorded);
      if (!*recorded) {
        stored.superseded = true;
        return fail("superseded");
      }
      if (rows[0].status == store::AppendStatus::too_large) return fail("page too large to store");
      stored.duplicate = rows[0].status == store::AppendStatus::duplicate;
      stored.seq = rows[0].seq;
      return {};
    });
    if (stored.superseded) return stored;
    if (!appended) return fail(appended);
    writer_.wake();
    return stored;
  };
  return on_writer<Result<StoredPage>>(writer_, std::move(task));
}

net::awaitable<Result<WriterLink::StoredPage>> WriterLink::store_row(
    const std::shared_ptr<const store::NewDelivery>& row) {
  std::function<Result<StoredPage>()> task = [this, row]() -> Result<StoredPage> {
    const store::NewDelivery* batch[] = {row.get()};
    auto appended = inbox_.append(batch);
    if (!appended) return fail(appended);
    writer_.wake();
    StoredPage stored;
    stored.duplicate = (*appended)[0].status == store::AppendStatus::duplicate;
    stored.seq = (*appended)[0].seq;
    return stored;
  };
  return on_writer<Result<StoredPage>>(writer_, std::move(task));
}

net::awaitable<Result<bool>> WriterLink::record_failure(const store::ClaimedJob& job,
                                                        const store::RetryDecision& decision,
                                                        const std::string& error, int64_t now_ms) {
  std::function<Result<bool>()> task = [this, job, decision, error, now_ms] {
    return jobs_.record_failure(job, decision, error, now_ms);
  };
  return on_writer<Result<bool>>(writer_, std::move(task));
}

net::awaitable<Result<bool>> WriterLink::release(const store::ClaimedJob& job, int64_t now_ms) {
  std::function<Result<bool>()> task = [this, job, now_ms] { return jobs_.release(job, now_ms); };
  return on_writer<Result<bool>>(writer_, std::move(task));
}

net::awaitable<Result<bool>> WriterLink::renew_lease(const store::ClaimedJob& job, int64_t now_ms) {
  std::function<Result<bool>()> task = [this, job, now_ms] { return jobs_.renew_lease(job, now_ms); };
  return on_writer<Result<bool>>(writer_, std::move(task));
}

}  // namespace hh::fetcher
