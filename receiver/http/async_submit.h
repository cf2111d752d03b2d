#pragma once
// Awaiting the inbox writer from a session coroutine: the delivery is queued for the next
// group commit and the coroutine resumes on its own executor with the outcome.
#include <memory>

#include "receiver/http/http_types.h"
#include "store/inbox_writer.h"

namespace hh::http {

struct SubmitResult {
  store::InboxWriter::Admission admission;
  store::AppendOutcome outcome;  // meaningful when admission == queued
};

template <typename CompletionToken>
auto async_submit(store::InboxWriter& writer, store::NewDelivery delivery, CompletionToken&& token) {
  return net::async_initiate<CompletionToken, void(SubmitResult)>(
      [&writer](auto handler, store::NewDelivery d) {
        using Handler = decltype(handler);
        // The work guard keeps io_context::run() from returning while a commit is pending.
        struct State {
          Handler handler;
          net::executor_work_guard<net::associated_executor_t<Handler, net::any_io_executor>> work;
        };
        auto executor = net::get_associated_executor(handler, net::any_io_executor());
        // Owned by whichever completion runs (exactly one does). A raw pointer keeps the
        // writer's std::function small enough to need no allocation of its own.
        auto* state = new State{std::move(handler), net::make_work_guard(executor)};
        auto complete = [](State* s, SubmitResult result) {
          auto ex = s->work.get_executor();
          net::post(ex, [s, result = std::move(result)]() mutable {
            std::unique_ptr<State> owned(s);
            auto work = std::move(owned->work);
            std::move(owned->handler)(std::move(result));
          });
        };
        const auto admission = writer.submit(std::move(d), [state, complete](const store::AppendOutcome& outcome) {
          complete(state, {store::InboxWriter::Admission::queued, outcome});
        });
        if (admission != store::InboxWriter::Admission::queued) {
          complete(state, {admission, {store::AppendOutcome::Kind::unavailable, 0, {}}});
        }
      },
      token, std::move(delivery));
}

}  // namespace hh::http
