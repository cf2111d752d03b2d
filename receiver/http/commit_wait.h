#pragma once
// Awaiting the inbox writer from a session coroutine, with a deadline (spec §2: every
// request has one). The delivery is queued for the next group commit; the coroutine
// resumes on its own executor with the outcome, or at the deadline without one. A
// delivery whose wait timed out may still be committed later: the service's retry of it
// is then a duplicate, which is what the 503 promises.
#include <chrono>
#include <optional>

#include "receiver/http/http_types.h"
#include "store/inbox_writer.h"

namespace hh::http {

struct SubmitResult {
  store::InboxWriter::Admission admission;
  std::optional<store::AppendOutcome> outcome;  // queued: nullopt when the deadline passed first
};

net::awaitable<SubmitResult> submit_and_wait(store::InboxWriter& writer, store::NewDelivery delivery,
                                             std::chrono::steady_clock::time_point deadline);

}  // namespace hh::http
