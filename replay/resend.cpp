#include "replay/resend.h"

#include <boost/asio.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/http/span_body.hpp>
#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "common/asio_token.h"
#include "common/http_url.h"
#include "common/http_client/connection.h"
#include "common/http_client/outcome.h"
#include "common/http_client/retry_after.h"
#include "common/http_client/tls_context.h"
#include "receiver/signature/webhook_signature.h"
#include "replay/ordering_key.h"
#include "replay/sendable_headers.h"

namespace hh::replay {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using http_client::Outcome;

constexpr size_t kLaneDepth = 16;                      // deliveries read ahead per lane
constexpr size_t kMaxQueuedBytes = 64 * 1024 * 1024;  // bodies read ahead, all lanes
constexpr auto kReadTimeout = std::chrono::seconds(30);  // no byte of the answer for this long: re-sent
constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr uint64_t kMaxAnswerBytes = 1024 * 1024;        // the receiver answers with a small JSON object
constexpr int kMaxTransportAttempts = 3;
constexpr int kMaxUnavailableAttempts = 5;
// The first answers, when every one of them is 401 and none was accepted, say the
// receiver holds another secret: stop instead of sending every line to be refused (each
// held refusal_delay_ms by the receiver: days for a large capture).
constexpr uint64_t kRefusedSignaturesToStop = 20;
constexpr int64_t kMaxRetryAfterSeconds = 30;
constexpr size_t kMaxReportedBodyBytes = 200;
// A body this large is announced with "Expect: 100-continue" and sent once the receiver
// says so: one it refuses (413 over its max_body_bytes) is answered after the head, and
// the receiver drops at most 64 MiB of a refused body before it closes (lingering_close.h),
// so a larger one sent whole failed the write with the 413 unread, and the run stopped at
// that line for good. Below it, the round trip costs more than the bytes.
constexpr size_t kExpectContinueBytes = 1024 * 1024;
// How long the head waits for "100 Continue" before the body goes anyway (a receiver or
// proxy that ignores Expect; curl waits as long).
constexpr auto kContinueWait = std::chrono::seconds(1);

// One delivery on its way.
struct Job {
  std::string_view file;  // the reader's name (readers outlive the run)
  uint64_t line = 0;
  std::string id;
  std::vector<CaptureHeader> headers;  // already filtered
  bool webhook_family = false;         // captured with webhook-* rather than svix-* headers
  std::string body;
};

struct Lane {
  Lane(const net::any_io_executor& executor, const http_client::Peer& peer, const http_client::Options& options)
      : ready(executor), connection(executor, peer, options) {}
  std::deque<Job> jobs;
  net::steady_timer ready;  // cancelled to wake the worker
  http_client::Connection connection;
  bool closed = false;  // no more jobs will come
  bool sending = false;  // a request of this lane awaits its answer
};

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// An answer saying "not now" rather than "not this": too many requests, or a failure of
// the receiver or a proxy before it. Retried, then the run stops at its line.
bool is_retryable(unsigned status) { return status == 429 || (status >= 500 && status < 600); }

std::string excerpt(std::string_view body) {
  std::string text(body.substr(0, kMaxReportedBodyBytes));
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// One attempt's deadline, shared with its timer's handler.
struct AttemptClock {
  bool active = true;    // the attempt has not ended
  bool expired = false;  // the deadline closed the connection
};

class Run {
 public:
  Run(net::io_context& io, const Target& target, std::shared_ptr<net::ssl::context> tls, const ResendOptions& options,
      const LineReport& report, Progress* progress)
      : io_(io), target_(target), options_(options), report_(report), progress_(progress), space_(io) {
    http_client::Peer peer;
    peer.host = target.host;
    peer.port = target.port;
    peer.tls = std::move(tls);
    http_client::Options connection_options;
    connection_options.connect_timeout = kConnectTimeout;
    connection_options.read_timeout = kReadTimeout;
    connection_options.max_body_bytes = kMaxAnswerBytes;
    for (size_t i = 0; i < std::max<size_t>(options.concurrency, 1); ++i) {
      lanes_.push_back(std::make_unique<Lane>(io.get_executor(), peer, connection_options));
    }
  }

  ResendSummary& summary() { return summary_; }
  Lane& lane(size_t i) { return *lanes_[i]; }

  net::awaitable<void> resolve() {
    tcp::resolver resolver(io_);
    const std::string port = std::to_string(target_.port);
    auto [ec, results] = co_await resolver.async_resolve(target_.host, port, use_tuple);
    if (ec) {
      resolve_error_ = "cannot resolve " + target_.host + ":" + port + ": " + ec.message();
      co_return;
    }
    for (const auto& entry : results) endpoints_.push_back(entry.endpoint());
  }

  const std::string& resolve_error() const { return resolve_error_; }

  // Reads the files and hands each delivery to its lane.
  net::awaitable<void> dispatch(std::span<CaptureReader> readers) {
    uint64_t base = 0;
    CaptureRecord record;
    std::string error;
    for (auto& reader : readers) {
      for (;;) {
        if (stopped_) break;
        auto next = reader.next(record, error);
        if (!next) {
          fatal(next.error());
          break;
        }
        if (*next == CaptureReader::Next::end) break;
        if (progress_) progress_->update(base + reader.bytes_consumed());
        ++summary_.lines;  // every line but blank ones, malformed ones too
        if (*next == CaptureReader::Next::bad_line) {
          fail_line(reader.name(), reader.line_number(), error);
          continue;
        }
        if (record.body_removed) {
          ++summary_.bodies_removed;
          continue;
        }
        Job job;
        job.file = reader.name();
        job.line = reader.line_number();
        job.id = record.id;
        if (!take_headers(record, job)) continue;
        job.body = std::move(record.body);
        const OrderingKey key = ordering_key(job.body);
        Lane& lane = *lanes_[std::hash<std::string>{}(key.user) % lanes_.size()];
        // Sent alone: everything before it answered first, nothing after it sent before
        // its answer (ordering_key.h).
        if (key.two_users) co_await until_lanes_idle();
        while (!stopped_ && (lane.jobs.size() >= kLaneDepth || queued_bytes_ >= kMaxQueuedBytes)) {
          co_await wait_for_space();
        }
        if (stopped_) break;
        queued_bytes_ += job.body.size();
        lane.jobs.push_back(std::move(job));
        lane.ready.cancel();
        if (key.two_users) co_await until_lanes_idle();
      }
      base += reader.bytes_consumed();
    }
    for (auto& lane : lanes_) {
      lane->closed = true;
      lane->ready.cancel();
    }
  }

  // Sends its lane's deliveries one at a time, in order.
  net::awaitable<void> work(Lane& lane) {
    for (;;) {
      if (!lane.jobs.empty()) {
        Job job = std::move(lane.jobs.front());
        lane.jobs.pop_front();
        queued_bytes_ -= job.body.size();
        space_.cancel();
        if (stopped_) continue;  // drop what is queued: the receiver is unreachable
        lane.sending = true;
        co_await send(lane, job);
        lane.sending = false;
        space_.cancel();
        continue;
      }
      if (lane.closed) break;
      lane.ready.expires_at(net::steady_timer::time_point::max());
      co_await lane.ready.async_wait(use_tuple);
    }
    lane.connection.close();
  }

 private:
  // Until a lane takes a job or finishes one (space_ is cancelled then), or the run stops.
  net::awaitable<void> wait_for_space() {
    space_.expires_at(net::steady_timer::time_point::max());
    co_await space_.async_wait(use_tuple);
  }

  // Until no lane holds a job or awaits an answer, or the run stops.
  net::awaitable<void> until_lanes_idle() {
    const auto busy = [](const std::unique_ptr<Lane>& lane) { return !lane->jobs.empty() || lane->sending; };
    while (!stopped_ && std::any_of(lanes_.begin(), lanes_.end(), busy)) co_await wait_for_space();
  }

  void fail_line(std::string_view file, uint64_t line, std::string_view reason) {
    ++summary_.failed;
    report_(file, line, reason);
  }

  void fatal(const std::string& reason) {
    if (!stopped_) report_("", 0, reason);
    stopped_ = true;
    summary_.stopped = true;
    space_.cancel();
  }

  // Stops the run at `job`'s line, which was not stored: it and every line after it are
  // left for the same command run again (the lines before it are duplicates then).
  void stop_at(const Job& job, const std::string& reason) {
    ++summary_.failed;
    if (stopped_) {
      report_(job.file, job.line, reason);  // another lane's, in flight when the run stopped
    } else {
      report_(job.file, job.line,
              reason + "; stopped here: this line and the ones after it were not sent (run the same command again "
                       "to send them)");
    }
    stopped_ = true;
    summary_.stopped = true;
    space_.cancel();
  }

  // Copies the headers worth forwarding; false (line reported) when one cannot be sent.
  bool take_headers(const CaptureRecord& record, Job& job) {
    if (const std::string unsendable = unsendable_header(record.headers); !unsendable.empty()) {
      fail_line(job.file, job.line, unsendable);
      return false;
    }
    bool svix = false, webhook = false;
    for (const auto& h : record.headers) {
      if (boost::beast::iequals(h.name, "svix-signature") || boost::beast::iequals(h.name, "svix-id")) svix = true;
      if (boost::beast::iequals(h.name, "webhook-signature") || boost::beast::iequals(h.name, "webhook-id")) webhook = true;
      if (!is_replaced_header(h.name)) job.headers.push_back(h);
    }
    job.webhook_family = webhook && !svix;
    return true;
  }

  // Opens the lane's connection for `job`; when no attempt connects, the run stops at the
  // job's line (nothing reachable: it was not sent, and the next line must not overtake it).
  net::awaitable<bool> connect(Lane& lane, const Job& job) {
    for (int attempt = 1;; ++attempt) {
      const Outcome connected = co_await lane.connection.connect(endpoints_);
      if (connected.ok()) co_return true;
      if (attempt == kMaxTransportAttempts) {
        stop_at(job, lane.connection.describe(connected));
        co_return false;
      }
      net::steady_timer pause(io_, std::chrono::milliseconds(500 * attempt));
      co_await pause.async_wait(use_tuple);
    }
  }

  // The body is the job's, not a copy (a line can be as large as max_body_bytes allows).
  bhttp::request<bhttp::span_body<const char>> build_request(const Job& job) {
    bhttp::request<bhttp::span_body<const char>> request{bhttp::verb::post, target_.path, 11};
    request.set(bhttp::field::host, target_.authority);
    bool has_content_type = false;
    for (const auto& h : job.headers) {
      request.insert(h.name, h.value);
      has_content_type = has_content_type || boost::beast::iequals(h.name, "content-type");
    }
    if (!has_content_type) request.set(bhttp::field::content_type, "application/json");
    const std::string timestamp = std::to_string(now_seconds());
    auto signature = signature::sign(options_.secret, job.id, timestamp, job.body);
    const std::string_view family = job.webhook_family ? "webhook" : "svix";
    request.set(std::string(family) + "-id", job.id);
    request.set(std::string(family) + "-timestamp", timestamp);
    request.set(std::string(family) + "-signature", signature ? *signature : std::string());
    request.keep_alive(true);
    if (job.body.size() >= kExpectContinueBytes) request.set(bhttp::field::expect, "100-continue");
    request.body() = {job.body.data(), job.body.size()};
    request.prepare_payload();
    return request;
  }

  net::awaitable<void> send(Lane& lane, const Job& job) {
    http_client::Connection& connection = lane.connection;
    int transport_attempts = 0;
    int unavailable_attempts = 0;
    for (;;) {
      if (!connection.is_open() && !co_await connect(lane, job)) co_return;
      auto request = build_request(job);  // a fresh timestamp for every attempt
      // The final answer (interim 1xx ones a proxy may send skipped), with its body.
      std::optional<bhttp::response_parser<bhttp::string_body>> answer;
      // read_timeout bounds the silence between bytes; this bounds the whole attempt (a
      // peer sending 102 Processing every few seconds, or a byte at a time, never ends it).
      // The handler may already be queued when the attempt ends: it checks `active`.
      auto attempt = std::make_shared<AttemptClock>();
      net::steady_timer attempt_deadline(io_, options_.answer_timeout);
      attempt_deadline.async_wait([&connection, attempt](const boost::system::error_code& ec) {
        if (ec || !attempt->active) return;
        attempt->expired = true;
        connection.close();
      });
      Outcome outcome;
      if (job.body.size() >= kExpectContinueBytes) {
        outcome = co_await connection.send_expecting_continue(request, answer, kContinueWait);
      } else {
        outcome = co_await connection.write(request);
        // A receiver that refused the request after its head and closed may have answered
        // before the write failed: the answer is there to read.
        if (outcome.failure == http_client::Failure::transport) {
          if (const Outcome answered = co_await connection.read_header(answer); answered.ok()) outcome = answered;
        }
        if (outcome.ok() && !answer) outcome = co_await connection.read_header(answer);
      }
      if (outcome.ok() && !answer->is_done()) outcome = co_await connection.read(*answer);
      attempt->active = false;
      attempt_deadline.cancel();
      if (!outcome.ok()) {
        // A keep-alive connection the receiver closed, a reset, a timeout: open a new one.
        connection.close();
        if (++transport_attempts < kMaxTransportAttempts) continue;
        // Not sent, as when nothing is reachable: the next line must not overtake it.
        const std::string why = attempt->expired ? "no whole answer within " +
                                                  std::to_string(options_.answer_timeout.count()) + " s (--timeout)"
                                            : connection.describe(outcome);
        stop_at(job, "no answer from " + options_.url + ": " + why);
        co_return;
      }
      if (!connection.reusable()) connection.close();
      const auto& response = answer->get();
      const unsigned status = response.result_int();
      if (is_retryable(status) && ++unavailable_attempts < kMaxUnavailableAttempts) {
        int64_t wait_seconds = 1;
        if (auto it = response.find(bhttp::field::retry_after); it != response.end()) {
          wait_seconds = http_client::parse_retry_after(it->value(), now_seconds()).value_or(1);
        }
        net::steady_timer pause(io_, std::chrono::seconds(std::clamp<int64_t>(wait_seconds, 0, kMaxRetryAfterSeconds)));
        co_await pause.async_wait(use_tuple);
        continue;
      }
      ++summary_.answered;
      ++summary_.statuses[status];
      if (status >= 200 && status < 300) {
        const std::string_view body = response.body();
        if (body.find("\"status\":\"duplicate\"") != std::string_view::npos) {
          ++summary_.duplicates;
        } else {
          ++summary_.stored;
        }
      } else if (is_retryable(status)) {
        // The receiver could not take it (full disk, busy store, overloaded): sending the
        // next line would store a later version of the same rows before this one, which a
        // second run would then store last. So stop here, as when it cannot be reached.
        stop_at(job, http_client::status_error(status, excerpt(response.body())) + " (" +
                         std::to_string(kMaxUnavailableAttempts) + " attempts)");
      } else {
        // Final for this line (400 invalid, 413 too large, 404): the next one goes on.
        fail_line(job.file, job.line, http_client::status_error(status, excerpt(response.body())));
        if (status == 401 && summary_.stored + summary_.duplicates == 0 &&
            summary_.statuses[401] == kRefusedSignaturesToStop && summary_.answered == kRefusedSignaturesToStop) {
          fatal("the receiver refused the signatures of the first " + std::to_string(kRefusedSignaturesToStop) +
                " deliveries (HTTP 401) and accepted none: wrong secret? (--secret-file, or the configuration's "
                "signing_secret_files); stopped");
        }
      }
      co_return;
    }
  }

  net::io_context& io_;
  const Target& target_;
  const ResendOptions& options_;
  const LineReport& report_;
  Progress* progress_;
  std::vector<tcp::endpoint> endpoints_;
  std::string resolve_error_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  net::steady_timer space_;  // cancelled when a lane takes or finishes a job: the dispatcher may go on
  size_t queued_bytes_ = 0;
  bool stopped_ = false;
  ResendSummary summary_;
};

}  // namespace

Result<Target> parse_target_url(std::string_view url, bool allow_plain_http) {
  auto parsed = parse_http_url(url);
  if (!parsed) return fail(parsed, "--to");
  const std::string shown = loggable_url(url);
  if (parsed->has_userinfo) return fail("--to " + shown + ": must not contain user information");
  const bool loopback = parsed->host == "localhost" || parsed->host == "::1" || parsed->host.starts_with("127.");
  if (!parsed->tls && !loopback && !allow_plain_http) {
    return fail("--to " + shown + ": plain http:// would send health data unencrypted to a host that is not "
                "loopback; use https://, or --allow-plain-http on a private network you trust");
  }
  Target target;
  target.tls = parsed->tls;
  target.host = parsed->host;
  target.port = parsed->port;
  target.authority = parsed->authority();
  target.path = parsed->path.empty() ? "/webhooks" : parsed->path;
  if (parsed->has_query) target.path += "?" + parsed->query;
  return target;
}

Result<ResendSummary> resend(std::span<CaptureReader> readers, const ResendOptions& options, const LineReport& report,
                             Progress* progress) {
  auto target = parse_target_url(options.url, options.allow_plain_http);
  if (!target) return fail(target);
  std::shared_ptr<net::ssl::context> tls;
  if (target->tls) {
    auto context = http_client::client_tls_context(options.ca_file);
    if (!context) return fail(context.error_kind(), (options.ca_file.empty() ? "TLS: " : "--ca-file: ") + context.error());
    tls = std::move(*context);
  }
  if (auto key = signature::decode_secret(options.secret); !key) return fail(key, "secret");

  const auto started = std::chrono::steady_clock::now();
  net::io_context io(1);
  Run run(io, *target, std::move(tls), options, report, progress);
  std::exception_ptr failure;
  const auto remember = [&failure](std::exception_ptr e) {
    if (e && !failure) failure = e;
  };
  net::co_spawn(io, run.resolve(), remember);
  io.run();
  if (failure) std::rethrow_exception(failure);  // a bug, not input
  if (!run.resolve_error().empty()) return fail(run.resolve_error());

  io.restart();
  net::co_spawn(io, run.dispatch(readers), remember);
  for (size_t i = 0; i < std::max<size_t>(options.concurrency, 1); ++i) {
    net::co_spawn(io, run.work(run.lane(i)), remember);  // `run` outlives io.run()
  }
  io.run();
  if (failure) std::rethrow_exception(failure);
  run.summary().seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run.summary();
}

}  // namespace hh::replay
