#include "forward/destination_sender.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <algorithm>
#include <limits>
#include <optional>
#include <random>

#include "common/asio_token.h"
#include "common/http_client/outcome.h"
#include "common/http_client/retry_after.h"
#include "common/log.h"
#include "forward/change_payload.h"
#include "forward/cpu_share.h"
#include "receiver/signature/webhook_signature.h"

namespace hh::forward {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

constexpr std::chrono::milliseconds kStoreRetryWait{1000};  // after a failed outbox read or write
constexpr size_t kErrorExcerptBytes = 200;
constexpr size_t kPlannedPerLane = 2;  // POSTs planned (and pinned) per lane at one look
// A step's own wall-clock limit, in POST deadlines: past the longest a limited thread can
// stretch a deadline (it is awake a sixth of the time at a 15 % share).
constexpr int kStepBackstop = 10;

// Printable, one line, at most kErrorExcerptBytes.
std::string excerpt(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, kErrorExcerptBytes)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  return out;
}

// What was going on when the deadline passed.
std::string_view doing(http_client::Step step) {
  switch (step) {
    case http_client::Step::resolve:
    case http_client::Step::connect:
    case http_client::Step::handshake: return "connecting";
    case http_client::Step::write: return "sending the request";
    case http_client::Step::wait:
    case http_client::Step::header:
    case http_client::Step::body: break;
  }
  return "waiting for the answer";
}

bool connecting(http_client::Step step) {
  return step == http_client::Step::resolve || step == http_client::Step::connect ||
         step == http_client::Step::handshake;
}

}  // namespace

struct DestinationSender::Lane {
  Lane(net::any_io_executor executor, http_client::Peer peer, http_client::Options options)
      : connection(std::move(executor), std::move(peer), options) {}
  http_client::Connection connection;
  bool busy = false;
  std::chrono::steady_clock::time_point started;  // of the POST in flight
};

// The deadline of one attempt: closes the lane's connection when it passes, which ends
// the pending operation. Shared with the timer's handler, which may run after the attempt
// ended (then it does nothing).
struct DestinationSender::Attempt {
  bool active = true;
  bool expired = false;
};

DestinationSender::DestinationSender(net::io_context& io, DestinationConfig config,
                                     std::shared_ptr<net::ssl::context> tls, store::Outbox& outbox,
                                     store::ReadStore& rows, DestinationMetrics& metrics, Clock now_ms,
                                     const std::atomic<int64_t>* slept_ns)
    : io_(io),
      config_(std::move(config)),
      redaction_(config_.url, config_.secret),
      rows_(rows),
      now_ms_(std::move(now_ms)),
      slept_ns_(slept_ns),
      scheduler_(config_.settings, outbox, metrics, std::random_device{}()),
      wakeup_(io) {
  if (config_.settings.mode != "deliveries") {
    // Each new POST's changes are read once, when it is pinned; every attempt sends them.
    scheduler_.render_contents_with([this](std::span<const store::OutboxEntry* const> entries) {
      return render_change_items(rows_, entries);
    });
  }
  http_client::Peer peer;
  peer.host = config_.url.host;
  peer.port = config_.url.port;
  if (config_.url.tls) peer.tls = std::move(tls);
  http_client::Options options;
  // The POST's deadline (attempt()) bounds every step, without the time the thread slept
  // yielding the CPU to ingest (cpu_share.h); each step's own limit, on the wall clock, is
  // only a backstop far past it, so that a sleep never fails a step the backend answered
  // in time.
  const auto backstop = std::chrono::milliseconds(config_.settings.timeout_ms) * kStepBackstop;
  options.connect_timeout = backstop;
  options.read_timeout = backstop;
  // The body is read a buffer at a time and given up past kMaxAnswerBytes (attempt()): the
  // client's own limit, which would fail a 2xx with a large body, does not apply.
  options.max_body_bytes = std::numeric_limits<uint64_t>::max();
  // `concurrency`, and kMaxBesideSlow more only for POSTs beside slow ones (lane_use()); a
  // lane opens its connection when it first sends.
  for (size_t i = 0; i < static_cast<size_t>(config_.settings.concurrency) + kMaxBesideSlow; ++i) {
    lanes_.push_back(std::make_unique<Lane>(io.get_executor(), peer, options));
  }
}

DestinationSender::~DestinationSender() = default;

void DestinationSender::set_paused(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  log::info(paused ? "forward_paused" : "forward_resumed").str("destination", config_.settings.name);
  if (!paused) wake();
}

void DestinationSender::stop() {
  stopping_ = true;
  scheduler_.flush();
  wakeup_.cancel();
  for (auto& lane : lanes_) lane->connection.close();
}

void DestinationSender::wake() {
  woken_ = true;
  wakeup_.cancel();
}

DestinationSender::LaneUse DestinationSender::lane_use(std::chrono::steady_clock::time_point now) const {
  const auto concurrency = static_cast<size_t>(config_.settings.concurrency);
  LaneUse use;
  size_t slow = 0;
  for (const auto& lane : lanes_) {
    if (!lane->busy) continue;
    ++use.busy;
    if (now - lane->started >= kSlowPostAfter) ++slow;
  }
  use.allowed = concurrency + std::min(slow, kMaxBesideSlow);
  return use;
}

std::vector<int64_t> DestinationSender::busy_ids() const { return scheduler_.in_flight_ids(); }

net::awaitable<void> DestinationSender::run() {
  while (!stopping_) {
    std::chrono::milliseconds wait = kPollInterval;
    woken_ = false;
    const auto now = std::chrono::steady_clock::now();
    if (paused_) {
      // Paused by an operator: entries wait in the outbox; nothing is planned or sent
      // (POSTs already planned stay pinned and go first on resume). A look with no room
      // still records what finished before the pause and makes entries as before it.
      (void)scheduler_.next_posts(now_ms_(), 0);
      wakeup_.expires_after(kPollInterval);
      co_await wakeup_.async_wait(use_tuple);
      continue;
    }
    const int64_t now_ms = now_ms_();
    const LaneUse use = lane_use(now);
    size_t free = use.free();
    // Look when a lane would otherwise stay idle, and at least every kPollInterval (to
    // delete what was delivered, and find what is new or due again).
    if ((free > 0 && planned_.empty()) || now - looked_at_ >= kPollInterval || scheduler_.flush_due()) {
      const size_t room = std::max(use.allowed, use.busy) * kPlannedPerLane;
      const size_t busy = planned_.size() + use.busy;
      Look look = scheduler_.next_posts(now_ms, room > busy ? room - busy : 0);
      looked_at_ = now;
      for (OutgoingPost& post : look.posts) planned_.push_back(std::move(post));
      if (look.store_failed) wait = kStoreRetryWait;
      if (look.more) woken_ = true;
    }
    for (auto& lane : lanes_) {
      if (planned_.empty() || free == 0) break;
      if (lane->busy) continue;
      lane->busy = true;
      lane->started = now;
      --free;
      net::co_spawn(io_, send(*lane, std::move(planned_.front())), net::detached);
      planned_.pop_front();
    }
    if (now_ms < scheduler_.paused_until_ms()) {
      // The backend could not be reached: no key can get through, so none is tried (and
      // none uses up an attempt) until the pause is over.
      wait = std::clamp(std::chrono::milliseconds(scheduler_.paused_until_ms() - now_ms), std::chrono::milliseconds(1),
                        kPollInterval);
    }
    if (woken_ || stopping_) continue;
    wakeup_.expires_after(wait);
    co_await wakeup_.async_wait(use_tuple);
  }
}

net::awaitable<void> DestinationSender::send(Lane& lane, OutgoingPost post) {
  const PostOutcome outcome = co_await attempt(lane, post);
  lane.busy = false;
  // Stopped while in flight: nothing is recorded (the entries go out again after a restart).
  if (!stopping_) scheduler_.finished(post, outcome, now_ms_());
  wake();
}

Result<std::string> DestinationSender::body_of(const OutgoingPost& post, PostOutcome& outcome) {
  // Entries made under the other mode (the destination's `mode` changed while they
  // waited): sent as this mode's body they would break its schema, or be looked for where
  // they are not, under ids that named other contents. Dead, saying why: `forward requeue
  // --dead` sends them once the mode is theirs again.
  const std::string_view kind = config_.settings.mode == "deliveries" ? "delivery" : "change";
  for (const auto& entry : post.entries) {
    if (entry.kind != kind) {
      outcome.undeliverable = true;
      return fail("made for mode = \"" + std::string(entry.kind == "delivery" ? "deliveries" : "changes") +
                  "\"; the destination's mode is now \"" + config_.settings.mode +
                  "\" (set it back and `forward requeue --dead` to send it)");
    }
  }
  if (config_.settings.mode != "deliveries") {
    // The contents pinned with the POST, change by change; what carries none (a POST of
    // more than kMaxPinnedRows rows, one pinned by a version before them) is read now.
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
  if (!found) return fail(found);
  if (!*found) {
    outcome.undeliverable = true;
    return fail("the delivery is no longer in the inbox");
  }
  if (delivery.body_removed_at_ms) {
    outcome.undeliverable = true;
    return fail("the delivery's body was removed by [retention] body_days before it could be forwarded");
  }
  return std::string(delivery.body);
}

// g++ 12 reports Asio's coroutine-frame allocator as a mismatch where it inlines this
// coroutine's ramp: a false positive (fetcher/https_client.cpp), silenced for this
// function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<PostOutcome> DestinationSender::attempt(Lane& lane, const OutgoingPost& post) {
  PostOutcome outcome;
  auto body = body_of(post, outcome);
  if (!body) {
    outcome.error = body.error();
    outcome.store_failed = !outcome.undeliverable;
    co_return outcome;
  }
  const std::string timestamp = std::to_string(now_ms_() / 1000);
  auto signature = signature::sign(config_.secret, post.webhook_id, timestamp, *body);
  if (!signature) {
    // The secret was checked at start (config/secrets.cpp): only a bug gets here.
    outcome.undeliverable = true;
    outcome.error = "signing: " + signature.error();
    co_return outcome;
  }
  bhttp::request<bhttp::string_body> request{bhttp::verb::post, config_.url.target(), 11};
  request.set(bhttp::field::host, config_.url.authority());
  request.set(bhttp::field::content_type, "application/json");
  request.set(bhttp::field::user_agent, "healthhook");
  request.set("webhook-id", post.webhook_id);
  request.set("webhook-timestamp", timestamp);
  request.set("webhook-signature", *signature);
  request.keep_alive(true);
  request.body() = std::move(*body);
  request.prepare_payload();

  http_client::Connection& connection = lane.connection;
  const std::chrono::milliseconds timeout(config_.settings.timeout_ms);
  auto deadline = std::make_shared<Attempt>();
  net::steady_timer timer(io_);
  // Closing the connection ends the pending operation. What the thread slept meanwhile,
  // yielding the CPU to ingest, does not count (cpu_share.h).
  arm_awake_deadline(timer, timeout, slept_ns_, [deadline] { return deadline->active; },
                     [deadline, &connection] {
                       deadline->expired = true;
                       connection.close();
                     });
  struct EndAttempt {
    Attempt& attempt;
    net::steady_timer& timer;
    ~EndAttempt() {
      attempt.active = false;
      timer.cancel();
    }
  } end_attempt{*deadline, timer};

  for (int tries = 0; tries < 2; ++tries) {
    const bool reused = connection.reusable();  // nothing arrived while it was idle
    http_client::Outcome sent;
    if (!reused) sent = co_await connection.connect();
    if (sent.ok()) sent = co_await connection.write(request);
    std::optional<bhttp::response_parser<bhttp::buffer_body>> answer;  // the final one (interim ones skipped)
    if (sent.ok()) sent = co_await connection.read_header(answer);
    if (!sent.ok()) {
      const std::string described = connection.describe(sent);
      connection.close();
      // A keep-alive connection the backend had closed meanwhile: once more on a new one.
      // Not after a timeout: the backend may be applying the POST (the retry waits for
      // its backoff, like any other).
      if (reused && sent.nothing_received() && sent.failure == http_client::Failure::transport && !stopping_ &&
          !deadline->expired) {
        continue;
      }
      if (deadline->expired) {
        outcome.failure = connecting(sent.step) ? "connect" : "timeout";
        outcome.unreachable = connecting(sent.step);
        outcome.error = "no answer within timeout_ms (" + std::to_string(timeout.count()) + " ms) while " +
                        std::string(doing(sent.step));
      } else {
        outcome.unreachable = connecting(sent.step);
        outcome.failure = http_client::failure_name(sent.failure);
        outcome.error = described;
      }
      co_return outcome;
    }
    auto& parser = *answer;
    outcome.status = parser.get().result_int();
    if (auto it = parser.get().find(bhttp::field::retry_after); it != parser.get().end()) {
      outcome.retry_after_s = http_client::parse_retry_after(it->value(), now_ms_() / 1000);
    }
    // The status decides. Of the body, a bounded amount is read (its start kept for a
    // failure's message) while the deadline lasts; an answer longer or slower than that
    // costs the connection, not the POST.
    // Kept longer than the excerpt by the longest string redacted, so that the excerpt
    // cannot end in the first part of one.
    const size_t kept = kErrorExcerptBytes + redaction_.longest();
    // A 2xx is done at its status: its body is read only while it comes at once, so a
    // backend that stalls after "200 OK" costs the connection, not timeout_ms of the lane
    // (black-box pass, stop 82: about four POSTs a second). A failure's body is read on,
    // while the deadline lasts, for its message.
    net::steady_timer success_body_wait(io_);
    if (*outcome.status >= 200 && *outcome.status < 300) {
      success_body_wait.expires_after(kSuccessBodyWait);
      success_body_wait.async_wait([deadline, &connection](const boost::system::error_code& ec) {
        if (!ec && deadline->active) connection.close();
      });
    }
    std::string start;
    uint64_t read = 0;
    char buffer[8192];
    while (!parser.is_done() && read < kMaxAnswerBytes && !deadline->expired) {
      parser.get().body().data = buffer;
      parser.get().body().size = sizeof buffer;
      parser.get().body().more = true;
      const http_client::Outcome got = co_await connection.read(parser);
      const size_t n = sizeof buffer - parser.get().body().size;
      read += n;
      if (start.size() < kept) start.append(buffer, std::min(n, kept - start.size()));
      if (!got.ok()) break;
    }
    // Cut short: more came than was kept, or the answer ended early (closed, the deadline).
    const TextEnd answer_end = read > start.size() || !parser.is_done() ? TextEnd::cut_short : TextEnd::whole;
    if (!parser.is_done() || !connection.reusable()) connection.close();
    if (*outcome.status < 200 || *outcome.status >= 300) {
      // An answer without a body leaves no empty tail ("HTTP 500", not "HTTP 500: ").
      outcome.error = http_client::status_error(*outcome.status, excerpt(redaction_.apply(start, answer_end)));
    }
    co_return outcome;
  }
  co_return outcome;
}
#pragma GCC diagnostic pop

}  // namespace hh::forward
