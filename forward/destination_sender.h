#pragma once
// Pushes one [[forward]] destination's outbox (store/outbox.h) to its URL over HTTP: the
// transport and the clock of the sender of spec §10, one coroutine loop per destination
// on the forwarder's io thread. What goes out when, and what an answer means, is the
// PostScheduler's (post_scheduler.h).
//
// Loop: when lanes are free and no planned POST waits, or at least every kPollInterval,
// look at the outbox (PostScheduler::next_posts(): up to two POSTs per lane are planned and
// pinned at a time, so a busy destination looks a few times a second, not once per POST),
// start the planned POSTs on free lanes, then wait for a lane to finish or for the next
// look.
//
// A POST: the body (change_payload.h, or the stored delivery byte-exact), signed with the
// destination's secret (Standard Webhooks: webhook-id, webhook-timestamp,
// webhook-signature over the exact bytes), sent on a keep-alive connection of the lane
// (common/http_client: TLS verified). One deadline, timeout_ms, covers the whole POST:
// connecting (a keep-alive connection the backend had closed is reopened once, at once,
// within it), sending, and the answer's status line and headers; the time the thread slept
// meanwhile yielding the CPU to ingest (cpu_share.h) does not count. Any 2xx is success,
// whatever its body: of a body at most kMaxAnswerBytes is read, until the deadline (a
// 2xx's for at most kSuccessBodyWait), and the connection is dropped rather than read on
// (a long, trickling or stalled answer never holds a lane). Interim 1xx answers before the final one are skipped. A failure's message keeps
// the first bytes of the body, without what it echoes of the URL's query or the secret
// (echo_redaction.h).
//
// Stopping deletes what was delivered, and cancels what is in flight without recording
// anything: those entries stay pending, pinned to their POSTs, and go out again after a
// restart under the same ids.
//
// Lifetime and threads: everything runs on the io_context given; `outbox` and `rows` are
// that thread's handles and must outlive this object.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/http_client/connection.h"
#include "common/http_url.h"
#include "config/settings.h"
#include "forward/echo_redaction.h"
#include "forward/forward_metrics.h"
#include "forward/post_scheduler.h"
#include "store/outbox.h"
#include "store/read_store.h"

namespace hh::forward {

struct DestinationConfig {
  config::ForwardSettings settings;
  std::string secret;  // "whsec_…"
  HttpUrl url;
};

class DestinationSender {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{100};
  // A POST unanswered this long (a backend hanging on one user's requests) no longer holds
  // its place among `concurrency`: one more may go out beside it, up to kMaxBesideSlow more
  // in all, so that other keys are not held back for its whole timeout (decision 069).
  static constexpr std::chrono::milliseconds kSlowPostAfter{1000};
  static constexpr size_t kMaxBesideSlow = 64;
  static constexpr uint64_t kMaxAnswerBytes = 64 * 1024;  // of an answer's body, read at most
  // A 2xx's body is read at most this long after its headers (the status decided already).
  static constexpr std::chrono::milliseconds kSuccessBodyWait{1000};
  using Clock = std::function<int64_t()>;  // Unix ms

  // `slept_ns`: how long the thread has slept yielding the CPU so far (cpu_share.h), which a
  // POST's deadline does not count; none: it never sleeps.
  DestinationSender(boost::asio::io_context& io, DestinationConfig config,
                    std::shared_ptr<boost::asio::ssl::context> tls, store::Outbox& outbox, store::ReadStore& rows,
                    DestinationMetrics& metrics, Clock now_ms, const std::atomic<int64_t>* slept_ns = nullptr);
  ~DestinationSender();

  boost::asio::awaitable<void> run();
  // Ends run() and cancels the POSTs in flight (on the io thread).
  void stop();
  // An operator's pause (store::Outbox::set_paused, read by the forwarder every few
  // seconds): while paused, no POST is planned or starts (those in flight finish). On the
  // io thread.
  void set_paused(bool paused);

  const config::ForwardSettings& settings() const { return config_.settings; }
  // Entries of POSTs planned or in flight: the disk budget leaves them alone.
  std::vector<int64_t> busy_ids() const;

 private:
  struct Lane;
  struct Attempt;
  boost::asio::awaitable<void> send(Lane& lane, OutgoingPost post);
  // One attempt of the POST on `lane`.
  boost::asio::awaitable<PostOutcome> attempt(Lane& lane, const OutgoingPost& post);
  Result<std::string> body_of(const OutgoingPost& post, PostOutcome& outcome);
  // POSTs in flight, and how many may be: `concurrency`, plus one per POST slower than
  // kSlowPostAfter (at most kMaxBesideSlow more).
  struct LaneUse {
    size_t busy = 0;
    size_t allowed = 0;
    size_t free() const { return allowed > busy ? allowed - busy : 0; }
  };
  LaneUse lane_use(std::chrono::steady_clock::time_point now) const;
  void wake();

  boost::asio::io_context& io_;
  const DestinationConfig config_;
  const EchoRedaction redaction_;  // of what an answer's body may echo (the URL's token, the secret)
  store::ReadStore& rows_;
  Clock now_ms_;
  const std::atomic<int64_t>* slept_ns_;
  PostScheduler scheduler_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::deque<OutgoingPost> planned_;  // planned and pinned, waiting for a lane
  std::chrono::steady_clock::time_point looked_at_{};
  boost::asio::steady_timer wakeup_;
  bool stopping_ = false;
  bool paused_ = false;  // set_paused()
  bool woken_ = false;   // wake() since the loop last looked: look again without waiting
};

}  // namespace hh::forward
