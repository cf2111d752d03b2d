#pragma once
// Pushes one [[forward]] destination's outbox (store/outbox.h) to its URL: the sender of
// spec §10, one coroutine loop per destination on the forwarder's io thread.
//
// Loop: list the pending entries (due or not) in outbox order, plan the POSTs that may
// start now (batch_planner.h: ordering per key, pinned batches, `concurrency` lanes),
// start each on a free lane, then wait for a lane to finish, for a retry to fall due, or
// for the next look at the outbox (kPollInterval: new entries are committed by the writer
// thread, which does not call in here). Between looks, the entries listed are planned
// from memory, kept up to date by each POST's outcome.
//
// A POST: the body (change_payload.h, or the stored delivery byte-exact), signed with the
// destination's secret (Standard Webhooks: webhook-id, webhook-timestamp,
// webhook-signature over the exact bytes), sent on a keep-alive connection of the lane
// (common/http_client: TLS verified, deadlines). A keep-alive connection the backend had
// closed is reopened once, at once. The answer decides (answer_policy.h): sent (deleted),
// later (attempts + 1, due after the backoff or Retry-After), or dead. A backend that
// cannot be reached at all (name, TCP connect, TLS handshake) pauses the whole destination
// with a backoff of its own: one POST finds out when it is back, instead of every key's
// first message using up an attempt.
//
// Delivered entries are deleted in one transaction per look at the outbox (at most
// kPollInterval later); a crash in between sends them once more, under the same ids.
// Stopping deletes them, and cancels what is in flight without recording anything: those
// entries stay pending as they were and go out again after a restart, under the same ids.
//
// Lifetime and threads: everything runs on the io_context given; `outbox` and `rows` are
// that thread's handles and must outlive this object.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/http_client/connection.h"
#include "config/settings.h"
#include "forward/answer_policy.h"
#include "common/http_url.h"
#include "forward/forward_metrics.h"
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
  using Clock = std::function<int64_t()>;  // Unix ms

  DestinationSender(boost::asio::io_context& io, DestinationConfig config,
                    std::shared_ptr<boost::asio::ssl::context> tls, store::Outbox& outbox, store::ReadStore& rows,
                    DestinationMetrics& metrics, Clock now_ms);
  ~DestinationSender();

  boost::asio::awaitable<void> run();
  // Ends run() and cancels the POSTs in flight (on the io thread).
  void stop();
  // An operator's pause (store::Outbox::set_paused, read by the forwarder every few
  // seconds): while paused, no POST starts (those in flight finish) and the outbox is not
  // listed. On the io thread.
  void set_paused(bool paused);

 private:
  struct Lane;
  struct Post;
  boost::asio::awaitable<void> send(Lane& lane, std::shared_ptr<Post> post);
  // One attempt of the POST on `lane`: the status, or no answer (failure named).
  boost::asio::awaitable<void> attempt(Lane& lane, Post& post);
  void record(Post& post);
  Result<std::string> body_of(Post& post, std::string& content_type);
  size_t free_lanes() const;
  void wake();
  // listed_ kept in step with what record() and pinning wrote.
  template <typename Change>
  void update_listed(std::span<const int64_t> ids, Change&& change);
  void forget_listed(std::span<const int64_t> ids);
  // Deletes the entries delivered since the last flush (sent_unflushed_).
  void flush_sent();

  boost::asio::io_context& io_;
  const DestinationConfig config_;
  store::Outbox& outbox_;
  store::ReadStore& rows_;
  DestinationMetrics& metrics_;
  Clock now_ms_;
  BackoffRule backoff_;
  std::mt19937_64 random_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unordered_set<int64_t> in_flight_;
  std::vector<store::OutboxEntry> listed_;  // the pending entries as last listed, kept up to date
  std::chrono::steady_clock::time_point listed_at_{};
  std::vector<int64_t> sent_unflushed_;  // delivered, not yet deleted from the store
  boost::asio::steady_timer wakeup_;
  bool stopping_ = false;
  bool paused_ = false;
  bool woken_ = false;    // wake() since the loop last looked: look again without waiting
  bool failing_ = false;  // the last POST failed (its first failure and the recovery are logged)
  // The backend could not be reached (no connection): nothing is sent before this (Unix ms).
  int64_t unreachable_until_ms_ = 0;
  int64_t unreachable_failures_ = 0;  // in a row, for the pause's backoff
  bool store_failing_ = false;  // the last outbox read or write failed (logged once until it works again)
};

}  // namespace hh::forward
