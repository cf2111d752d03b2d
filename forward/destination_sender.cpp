#include "forward/destination_sender.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <algorithm>

#include "common/asio_token.h"
#include "common/http_client/retry_after.h"
#include "common/log.h"
#include "forward/batch_planner.h"
#include "forward/change_payload.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::forward {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

constexpr std::chrono::milliseconds kStoreRetryWait{1000};   // after a failed outbox read or write
constexpr uint64_t kMaxAnswerBytes = 64 * 1024;              // of a backend's answer (only an excerpt is kept)
constexpr size_t kErrorExcerptBytes = 200;
constexpr size_t kMinListed = 256;                            // pending entries looked at per round
constexpr size_t kMaxUnflushedSent = 4096;                    // sent entries deleted at the latest then

std::string_view outcome_of_status(unsigned status) {
  if (status >= 200 && status < 300) return "ok";
  if (status == 408) return "http_408";
  if (status == 429) return "http_429";
  if (status >= 400 && status < 500) return "http_4xx";
  if (status >= 500 && status < 600) return "http_5xx";
  return "http_other";
}

// Printable, one line, at most kErrorExcerptBytes.
std::string excerpt(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, kErrorExcerptBytes)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  return out;
}

}  // namespace

struct DestinationSender::Lane {
  Lane(net::any_io_executor executor, http_client::Peer peer, http_client::Options options)
      : connection(std::move(executor), std::move(peer), options) {}
  http_client::Connection connection;
  bool busy = false;
};

// One POST and what came of it.
struct DestinationSender::Post {
  std::vector<store::OutboxEntry> entries;
  std::vector<int64_t> ids;
  std::string id;                 // webhook-id
  std::optional<int64_t> batch_id;  // several changes in one POST: kept together for its retries
  std::optional<unsigned> status;  // the answer's; none: no answer
  std::string failure;            // no answer: the transport failure's name
  std::string error;              // why it failed, in words
  std::optional<int64_t> retry_after_s;
  bool cancelled = false;         // stopped while in flight: nothing is recorded
  bool undeliverable = false;     // no body can be made (a delivery's body was removed): final
  bool store_failed = false;      // the body could not be read now: try again later
  bool unreachable = false;       // no connection (name, TCP, TLS): the backend, not this POST
};

DestinationSender::DestinationSender(net::io_context& io, DestinationConfig config,
                                     std::shared_ptr<net::ssl::context> tls, store::Outbox& outbox,
                                     store::ReadStore& rows, DestinationMetrics& metrics, Clock now_ms)
    : io_(io),
      config_(std::move(config)),
      outbox_(outbox),
      rows_(rows),
      metrics_(metrics),
      now_ms_(std::move(now_ms)),
      backoff_{std::chrono::milliseconds(config_.settings.backoff_initial_ms),
               std::chrono::seconds(config_.settings.backoff_max_s)},
      random_(std::random_device{}()),
      wakeup_(io) {
  http_client::Peer peer;
  peer.host = config_.url.host;
  peer.port = config_.url.port;
  if (config_.url.tls) peer.tls = std::move(tls);
  http_client::Options options;
  options.connect_timeout = std::chrono::milliseconds(config_.settings.timeout_ms);
  options.read_timeout = std::chrono::milliseconds(config_.settings.timeout_ms);
  options.max_body_bytes = kMaxAnswerBytes;
  for (int64_t i = 0; i < config_.settings.concurrency; ++i) {
    lanes_.push_back(std::make_unique<Lane>(io.get_executor(), peer, options));
  }
}

DestinationSender::~DestinationSender() = default;

void DestinationSender::set_paused(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  log::info(paused ? "forward_paused" : "forward_resumed").str("destination", config_.settings.name);
  if (paused) {
    listed_.clear();  // listed again, afresh, on resume
  } else {
    wake();
  }
}

void DestinationSender::stop() {
  stopping_ = true;
  if (!sent_unflushed_.empty()) flush_sent();
  wakeup_.cancel();
  for (auto& lane : lanes_) lane->connection.close();
}

void DestinationSender::wake() {
  woken_ = true;
  wakeup_.cancel();
}

size_t DestinationSender::free_lanes() const {
  return static_cast<size_t>(std::count_if(lanes_.begin(), lanes_.end(), [](const auto& l) { return !l->busy; }));
}

net::awaitable<void> DestinationSender::run() {
  const config::ForwardSettings& s = config_.settings;
  const bool deliveries = s.mode == "deliveries";
  const size_t batch = deliveries ? 1 : static_cast<size_t>(s.batch);
  store::OutboxSelection selection;
  selection.destination = s.name;
  selection.state = "pending";
  selection.limit = static_cast<int64_t>(std::max(kMinListed, batch * lanes_.size() * 2));
  while (!stopping_) {
    std::chrono::milliseconds wait = kPollInterval;
    woken_ = false;
    const size_t free = free_lanes();
    const auto now = std::chrono::steady_clock::now();
    // The pending entries are listed again when the ones known are used up, and at least
    // every kPollInterval (new entries, re-queued ones); in between, a finished POST
    // updates what is known (record()), so a busy destination reads the outbox ten times a
    // second, not once per POST.
    const bool flush_due = sent_unflushed_.size() >= kMaxUnflushedSent || now - listed_at_ >= kPollInterval;
    if (!sent_unflushed_.empty() && flush_due) {
      flush_sent();
    }
    if (paused_) {
      // Paused by an operator: entries wait in the outbox; nothing is listed or sent.
      wakeup_.expires_after(kPollInterval);
      co_await wakeup_.async_wait(use_tuple);
      continue;
    }
    if (free > 0 && (listed_.empty() || now - listed_at_ >= kPollInterval)) {
      if (!sent_unflushed_.empty()) flush_sent();  // a listing must not find them again
      auto listed = outbox_.list(selection);
      if (!listed) {
        if (!store_failing_) {
          log::error("forward_outbox_unreadable").str("destination", s.name).str("error", listed.error());
        }
        store_failing_ = true;
        listed_.clear();
        wait = kStoreRetryWait;
      } else {
        store_failing_ = false;
        listed_ = std::move(*listed);
        forget_listed(sent_unflushed_);  // sent, but their deletion failed: not again
        listed_at_ = now;
      }
    }
    const int64_t now_ms = now_ms_();
    if (now_ms < unreachable_until_ms_) {
      // The backend could not be reached: no key can get through, so none is tried (and
      // none uses up an attempt) until the pause is over.
      wait = std::clamp(std::chrono::milliseconds(unreachable_until_ms_ - now_ms), std::chrono::milliseconds(1),
                        kPollInterval);
    } else if (free > 0 && !listed_.empty()) {
      const std::vector<PlannedPost> planned =
          plan_posts(listed_, in_flight_, now_ms, PlanLimits{.ordered = s.ordered, .batch = batch, .posts = free});
      for (const PlannedPost& p : planned) {
        auto post = std::make_shared<Post>();
        for (const store::OutboxEntry* e : p.entries) {
          post->entries.push_back(*e);
          post->ids.push_back(e->outbox_id);
          in_flight_.insert(e->outbox_id);
        }
        post->id = deliveries ? post->entries.front().row_key
                              : message_id(p.pinned_batch.value_or(post->entries.front().outbox_id));
        // A POST of several that fails is retried whole, under the same id (record()).
        if (!deliveries && post->ids.size() > 1) {
          post->batch_id = p.pinned_batch.value_or(post->entries.front().outbox_id);
        }
        auto lane = std::find_if(lanes_.begin(), lanes_.end(), [](const auto& l) { return !l->busy; });
        (*lane)->busy = true;
        net::co_spawn(io_, send(**lane, std::move(post)), net::detached);
      }
      // Nothing to start: wait for the first entry that falls due (a lane that finishes,
      // or the next listing, cut the wait short).
      if (planned.empty()) {
        int64_t next_due = INT64_MAX;
        for (const store::OutboxEntry& e : listed_) {
          if (!in_flight_.contains(e.outbox_id)) next_due = std::min(next_due, e.next_attempt_at_ms);
        }
        if (next_due != INT64_MAX) {
          wait = std::clamp(std::chrono::milliseconds(next_due - now_ms), std::chrono::milliseconds(1), kPollInterval);
        }
      }
    }
    if (woken_ || stopping_) continue;
    wakeup_.expires_after(wait);
    co_await wakeup_.async_wait(use_tuple);
  }
}

template <typename Change>
void DestinationSender::update_listed(std::span<const int64_t> ids, Change&& change) {
  for (store::OutboxEntry& e : listed_) {
    if (std::find(ids.begin(), ids.end(), e.outbox_id) != ids.end()) change(e);
  }
}

void DestinationSender::flush_sent() {
  if (auto deleted = outbox_.sent(sent_unflushed_); !deleted) {
    // They stay pending in the store: kept here, so they are not sent again, and deleted
    // with the next flush.
    log::error("forward_outbox_not_updated").str("destination", config_.settings.name).str("error", deleted.error());
    return;
  }
  sent_unflushed_.clear();
}

void DestinationSender::forget_listed(std::span<const int64_t> ids) {
  std::erase_if(listed_, [&](const store::OutboxEntry& e) {
    return std::find(ids.begin(), ids.end(), e.outbox_id) != ids.end();
  });
}

net::awaitable<void> DestinationSender::send(Lane& lane, std::shared_ptr<Post> post) {
  co_await attempt(lane, *post);
  lane.busy = false;
  for (const int64_t id : post->ids) in_flight_.erase(id);
  if (!stopping_ && !post->cancelled) record(*post);
  wake();
}

Result<std::string> DestinationSender::body_of(Post& post, std::string& content_type) {
  content_type = "application/json";
  if (config_.settings.mode != "deliveries") {
    std::vector<const store::OutboxEntry*> entries;
    for (const auto& e : post.entries) entries.push_back(&e);
    return render_changes(rows_, config_.settings.name, entries);
  }
  store::StoredDelivery delivery;
  auto found = rows_.deliveries().find(post.entries.front().row_key, delivery);
  // The row's views stay valid until finish(), which also ends the read it holds open (a
  // reader left open would see the store as it was then, for ever).
  struct EndRead {
    store::DeliveryQuery& query;
    ~EndRead() { query.finish(); }
  } end_read{rows_.deliveries()};
  if (!found) return fail(found.error());
  if (!*found) {
    post.undeliverable = true;
    return fail("the delivery is no longer in the inbox");
  }
  if (delivery.body_removed_at_ms) {
    post.undeliverable = true;
    return fail("the delivery's body was removed by [retention] body_days before it could be forwarded");
  }
  return std::string(delivery.body);
}

net::awaitable<void> DestinationSender::attempt(Lane& lane, Post& post) {
  std::string content_type;
  auto body = body_of(post, content_type);
  if (!body) {
    post.error = body.error();
    post.store_failed = !post.undeliverable;
    co_return;
  }
  const std::string timestamp = std::to_string(now_ms_() / 1000);
  auto signature = signature::sign(config_.secret, post.id, timestamp, *body);
  if (!signature) {
    post.undeliverable = true;
    post.error = "signing: " + signature.error();
    co_return;
  }
  bhttp::request<bhttp::string_body> request{bhttp::verb::post, config_.url.target(), 11};
  request.set(bhttp::field::host, config_.url.authority());
  request.set(bhttp::field::content_type, content_type);
  request.set(bhttp::field::user_agent, "healthhook");
  request.set("webhook-id", post.id);
  request.set("webhook-timestamp", timestamp);
  request.set("webhook-signature", *signature);
  request.keep_alive(true);
  request.body() = std::move(*body);
  request.prepare_payload();

  http_client::Connection& connection = lane.connection;
  for (int tries = 0; tries < 2; ++tries) {
    const bool reused = connection.is_open();
    http_client::Outcome outcome;
    if (!reused) outcome = co_await connection.connect();
    bhttp::response_parser<bhttp::string_body> parser;  // one per answer (its body limit)
    if (outcome.ok()) outcome = co_await connection.write(request);
    if (outcome.ok()) outcome = co_await connection.read(parser);
    if (!outcome.ok()) {
      const std::string described = connection.describe(outcome);
      connection.close();
      // A keep-alive connection the backend had closed meanwhile: once more on a new one.
      if (reused && outcome.nothing_received() && !stopping_) continue;
      post.cancelled = outcome.failure == http_client::Failure::cancelled || stopping_;
      post.unreachable = outcome.step == http_client::Step::resolve || outcome.step == http_client::Step::connect ||
                         outcome.step == http_client::Step::handshake;
      post.failure = http_client::failure_name(outcome.failure);
      post.error = described;
      co_return;
    }
    if (!connection.reusable()) connection.close();
    const auto& response = parser.get();
    post.status = response.result_int();
    if (auto it = response.find(bhttp::field::retry_after); it != response.end()) {
      post.retry_after_s = http_client::parse_retry_after(it->value(), now_ms_() / 1000);
    }
    if (*post.status < 200 || *post.status >= 300) {
      post.error = "HTTP " + std::to_string(*post.status) + ": " + excerpt(response.body());
    }
    co_return;
  }
}

void DestinationSender::record(Post& post) {
  const config::ForwardSettings& s = config_.settings;
  const int64_t now = now_ms_();
  Verdict verdict = Verdict::retry;
  if (post.status) {
    metrics_.count_request(outcome_of_status(*post.status));
    verdict = verdict_of_status(*post.status);
  } else if (post.undeliverable) {
    verdict = Verdict::final;
  } else if (!post.store_failed) {
    metrics_.count_request(post.failure);
  }
  const std::optional<int64_t> status = post.status ? std::optional<int64_t>(*post.status) : std::nullopt;
  if (post.status) {
    unreachable_failures_ = 0;
  } else if (post.unreachable) {
    // Every lane would fail the same way: the whole destination waits, with its own backoff.
    ++unreachable_failures_;
    unreachable_until_ms_ = now + retry_delay(backoff_, unreachable_failures_, std::nullopt, random_).count();
  }
  const auto n = static_cast<uint64_t>(post.ids.size());
  Result<void> written;
  if (verdict == Verdict::delivered) {
    unreachable_failures_ = 0;
    // Deleted with the next look at the outbox (flush_sent()): one write transaction every
    // kPollInterval instead of one per POST, which the writer thread would wait for.
    sent_unflushed_.insert(sent_unflushed_.end(), post.ids.begin(), post.ids.end());
    metrics_.sent.fetch_add(n, std::memory_order_relaxed);
    forget_listed(post.ids);
    if (written && failing_) log::info("forward_recovered").str("destination", s.name);
    failing_ = false;
  } else {
    const int64_t attempts = post.entries.front().attempts + 1;
    int64_t oldest = INT64_MAX;
    for (const auto& e : post.entries) oldest = std::min(oldest, e.created_at_ms);
    std::string error = post.error;
    if (verdict == Verdict::retry && attempts >= s.max_attempts) {
      verdict = Verdict::final;
      error = "gave up after " + std::to_string(attempts) + " attempts (max_attempts); last: " + error;
    } else if (verdict == Verdict::retry && now - oldest >= s.max_age_s * 1000) {
      verdict = Verdict::final;
      error = "gave up: older than max_age after " + std::to_string(attempts) + " attempts; last: " + error;
    }
    if (verdict == Verdict::final) {
      written = outbox_.dead(post.ids, status, error);
      if (written) metrics_.dead.fetch_add(n, std::memory_order_relaxed);
      forget_listed(post.ids);
      log::warn("forward_dead")
          .str("destination", s.name)
          .str("id", post.id)
          .num("messages", static_cast<int64_t>(n))
          .num("attempts", attempts)
          .str("error", error);
    } else {
      const auto delay = retry_delay(backoff_, attempts, post.retry_after_s, random_);
      written = outbox_.retry_later(post.ids, now + delay.count(), status, error, post.batch_id);
      if (written) {
        update_listed(post.ids, [&](store::OutboxEntry& e) {
          e.attempts = attempts;
          e.next_attempt_at_ms = now + delay.count();
          e.batch_id = post.batch_id;
        });
      }
      if (!failing_) {
        log::warn("forward_failing")
            .str("destination", s.name)
            .str("id", post.id)
            .str("error", error)
            .num("retry_in_ms", delay.count());
      }
      failing_ = true;
    }
  }
  if (!written) {
    // Nothing changed in the store: the entries are still pending as they were and go out
    // again (the backend deduplicates on their ids).
    log::error("forward_outbox_not_updated")
        .str("destination", s.name)
        .str("id", post.id)
        .str("error", written.error());
  }
}

}  // namespace hh::forward
