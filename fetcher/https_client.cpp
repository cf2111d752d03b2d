#include "fetcher/https_client.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/string.hpp>
#include <deque>
#include <optional>
#include <set>

#include "common/http_client/connection.h"
#include "common/http_client/tls_context.h"
#include "common/redaction.h"
#include "fetcher/gzip_decoder.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using http_client::Connection;
using http_client::Outcome;

constexpr size_t kChunkBytes = 64 * 1024;         // one read into the body, then decoded/appended
constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kErrorExcerptBytes = 512;        // of a non-2xx body, for last_error
constexpr uint64_t kMaxErrorBodyBytes = 64 * 1024;  // a longer non-2xx body closes the connection instead

// A non-2xx body is kept as its first kErrorExcerptBytes with the API key replaced: a
// service that echoes the key it refused ("Invalid API key sk_…") would otherwise put it
// in jobs.last_error, the log and the read API's jobs. More is collected than the excerpt
// (kExcerptSlack per byte of the key), so that a key starting inside the excerpt is seen
// whole, even JSON-escaped; it is redacted before it is cut.
constexpr size_t kExcerptSlack = 6;  // bytes a JSON string may spend on one byte: \u002f

// Sets result.body to the excerpt, and body_cut when it is shorter than the answer.
void keep_error_excerpt(FetchResult& result, TextEnd end, const std::string& key) {
  result.body = redacted(result.body, std::span(&key, 1), end);
  result.body_cut = end == TextEnd::cut_short || result.body.size() > kErrorExcerptBytes;
  if (result.body.size() > kErrorExcerptBytes) result.body.resize(kErrorExcerptBytes);
}

FetchResult failed(FetchFailure failure, std::string error) {
  FetchResult result;
  result.failure = failure;
  result.error = std::move(error);
  return result;
}

FetchResult failed(const Connection& connection, const Outcome& outcome) {
  if (outcome.failure == FetchFailure::too_large) {
    return failed(outcome.failure, "response body over max_response_bytes (" +
                                       std::to_string(connection.options().max_body_bytes) + ")");
  }
  return failed(outcome.failure, connection.describe(outcome));
}

FetchResult cancelled() { return failed(FetchFailure::cancelled, "cancelled (stopping)"); }

bhttp::verb verb_of(Method method) {
  switch (method) {
    case Method::get: return bhttp::verb::get;
    case Method::post: return bhttp::verb::post;
    case Method::patch: return bhttp::verb::patch;
    case Method::delete_: return bhttp::verb::delete_;
  }
  return bhttp::verb::get;
}

}  // namespace

struct HttpsClient::Impl {
  struct Idle {
    std::unique_ptr<Connection> connection;
    std::chrono::steady_clock::time_point since;
  };
  // Keeps a connection in `active` while it connects or carries a request (close_all).
  struct Active {
    Active(std::set<Connection*>& set, Connection* connection) : set(set), connection(connection) {
      set.insert(connection);
    }
    ~Active() { set.erase(connection); }
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;
    std::set<Connection*>& set;
    Connection* connection;
  };

  http_client::Peer peer;             // tls null for http://127.0.0.1
  http_client::Options connection_options;
  std::deque<Idle> idle;              // most recently used at the back
  std::set<Connection*> active;
  uint64_t close_generation = 0;      // bumped by close_all
};

Result<std::unique_ptr<HttpsClient>> HttpsClient::create(net::any_io_executor executor, BaseUrl base,
                                                         ClientOptions options) {
  std::unique_ptr<HttpsClient> client(new HttpsClient(std::move(executor), std::move(base), std::move(options)));
  Impl& impl = *client->impl_;
  impl.peer.host = client->base_.host;
  impl.peer.port = client->base_.port;
  if (client->base_.tls) {
    const std::string& ca_file = client->options_.ca_file;
    auto context = http_client::client_tls_context(ca_file);
    if (!context) return fail(context.error_kind(), (ca_file.empty() ? "TLS: " : "service.ca_file: ") + context.error());
    impl.peer.tls = std::move(*context);
  } else if (client->base_.host != "127.0.0.1") {
    return fail("plain http is only allowed for 127.0.0.1");  // BaseUrl::parse refuses it too
  }
  impl.connection_options.connect_timeout = client->options_.connect_timeout;
  impl.connection_options.read_timeout = client->options_.read_timeout;
  impl.connection_options.max_body_bytes = client->options_.max_response_bytes;
  impl.connection_options.max_header_bytes = kMaxHeaderBytes;
  return client;
}

HttpsClient::HttpsClient(net::any_io_executor executor, BaseUrl base, ClientOptions options)
    : executor_(std::move(executor)), base_(std::move(base)), options_(std::move(options)),
      impl_(std::make_unique<Impl>()) {}

HttpsClient::~HttpsClient() = default;

void HttpsClient::close_all() {
  ++impl_->close_generation;
  for (Connection* connection : impl_->active) connection->close();
  for (auto& idle : impl_->idle) idle.connection->close();
  impl_->idle.clear();
}

std::unique_ptr<Connection> HttpsClient::take_idle() {
  const auto now = std::chrono::steady_clock::now();
  while (!impl_->idle.empty()) {
    Impl::Idle idle = std::move(impl_->idle.back());
    impl_->idle.pop_back();
    if (now - idle.since < options_.max_idle_time && idle.connection->reusable()) return std::move(idle.connection);
    idle.connection->close();
  }
  return nullptr;
}

void HttpsClient::give_back(std::unique_ptr<Connection> connection) {
  impl_->idle.push_back(Impl::Idle{std::move(connection), std::chrono::steady_clock::now()});
  while (impl_->idle.size() > options_.max_idle_connections) {
    impl_->idle.front().connection->close();
    impl_->idle.pop_front();
  }
}

// g++ 12 reports Asio's coroutine-frame allocator (aligned_alloc, freed by the frame's
// own operator delete, boost/asio/detail/memory.hpp) as a mismatch where it inlines this
// coroutine's ramp (in the unity build): a false positive, as in job_runner.cpp,
// silenced for these two functions only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<Outcome> HttpsClient::write_request(Connection& connection, Method method, const std::string& target,
                                                   const RequestBody* body) {
  const auto head = [&](auto& request) {
    request.set(bhttp::field::host, base_.authority());
    request.set(bhttp::field::user_agent, "healthhook");
    request.set(bhttp::field::accept, "application/json");
    request.set(bhttp::field::accept_encoding, "gzip");
    request.set(options_.api_key_header, options_.api_key);
  };
  if (body == nullptr) {
    bhttp::request<bhttp::empty_body> request{verb_of(method), target, 11};
    head(request);
    if (method == Method::post) request.prepare_payload();  // Content-Length: 0, which servers may require of a POST
    co_return co_await connection.write(request);
  }
  bhttp::request<bhttp::string_body> request{verb_of(method), target, 11};
  head(request);
  request.set(bhttp::field::content_type, body->content_type);
  request.body() = body->bytes;
  request.prepare_payload();
  co_return co_await connection.write(request);
}

net::awaitable<FetchResult> HttpsClient::exchange(Connection& connection, Method method, const std::string& target,
                                                  const RequestBody* body, Outcome& outcome) {
  auto write = write_request(connection, method, target, body);
  outcome = co_await std::move(write);
  if (!outcome.ok()) co_return failed(connection, outcome);

  // The connection sets the parser's limits: a Content-Length over max_response_bytes
  // fails with the header, and no body grows past it on the wire.
  std::optional<bhttp::response_parser<bhttp::buffer_body>> answer;  // the final one (interim ones skipped)
  outcome = co_await connection.read_header(answer);
  if (!outcome.ok()) co_return failed(connection, outcome);
  auto& parser = *answer;

  FetchResult result;
  auto& response = parser.get();
  result.status = response.result_int();
  if (auto it = response.find(bhttp::field::retry_after); it != response.end()) {
    result.retry_after = std::string(it->value());
  }
  const bool success = result.status / 100 == 2;
  std::string_view encoding = response[bhttp::field::content_encoding];
  while (!encoding.empty() && encoding.back() == ' ') encoding.remove_suffix(1);
  while (!encoding.empty() && encoding.front() == ' ') encoding.remove_prefix(1);
  const bool gzip = beast::iequals(encoding, "gzip") || beast::iequals(encoding, "x-gzip");
  if (success && !gzip && !encoding.empty() && !beast::iequals(encoding, "identity")) {
    co_return failed(FetchFailure::protocol, "unsupported Content-Encoding \"" + std::string(encoding) + "\"");
  }
  std::optional<GzipDecoder> decoder;
  if (gzip) decoder.emplace();
  const uint64_t limit = options_.max_response_bytes;
  // A non-2xx body is kept as an excerpt; a gzip one (we asked for gzip) is decoded first,
  // up to the excerpt's size, so that last_error quotes text, not compressed bytes.
  const size_t keep = kErrorExcerptBytes + kExcerptSlack * options_.api_key.size();
  bool excerpt_full = false;   // the decoded excerpt reached `keep`: decoding stopped there
  bool undecodable = false;    // the gzip error body did not decode: not quoted
  if (success && !gzip && parser.content_length()) {
    result.body.reserve(static_cast<size_t>(*parser.content_length()));  // at most `limit` (body_limit)
  }

  auto chunk = std::make_unique<char[]>(kChunkBytes);
  while (!parser.is_done()) {
    response.body().data = chunk.get();
    response.body().size = kChunkBytes;
    outcome = co_await connection.read(parser);
    if (!outcome.ok()) co_return failed(connection, outcome);
    const size_t got = kChunkBytes - response.body().size;
    result.wire_bytes += got;
    const std::string_view bytes(chunk.get(), got);
    if (!success) {
      // Kept only as an excerpt for last_error; the status is what counts.
      if (!decoder) {
        result.body.append(bytes.substr(0, keep - std::min(keep, result.body.size())));
      } else if (!excerpt_full && !undecodable) {
        if (auto fed = decoder->feed(bytes, result.body, keep); !fed) {
          excerpt_full = result.body.size() >= keep;
          undecodable = !excerpt_full;
        }
      }
      if (result.wire_bytes > kMaxErrorBodyBytes) break;  // not worth draining: not reusable, closed
      continue;
    }
    if (decoder) {
      if (auto fed = decoder->feed(bytes, result.body, static_cast<size_t>(limit)); !fed) {
        const bool over = result.body.size() >= limit;
        co_return failed(over ? FetchFailure::too_large : FetchFailure::protocol,
                         over ? "decoded response body over max_response_bytes (" + std::to_string(limit) + ")"
                              : fed.error());
      }
    } else {
      result.body.append(bytes);  // the wire size is the decoded size, held to `limit` by the parser
    }
  }
  if (!success) {
    // Cut short (it may end inside the key) when more came than was kept (an answer that
    // ends early is a transport failure, above, and keeps no excerpt).
    if (undecodable) result.body = "[gzip body that does not decode]";
    const bool cut = decoder ? excerpt_full || (!undecodable && !decoder->finished())
                             : result.wire_bytes > result.body.size();
    keep_error_excerpt(result, cut ? TextEnd::cut_short : TextEnd::whole, options_.api_key);
    co_return result;
  }
  if (decoder && !decoder->finished()) {
    co_return failed(FetchFailure::protocol, "gzip body ended before its trailer");
  }
  // A 2xx answer may echo the key too (`200 {"detail": "key sk_… refused"}`, stored as an
  // invalid delivery and printed by `query deliveries`): redacted as an error body is,
  // whole (no excerpt), and copied only when the key is in it.
  redact_in_place(result.body, std::span(&options_.api_key, 1));
  co_return result;
}
#pragma GCC diagnostic pop

net::awaitable<FetchResult> HttpsClient::get(std::string target) {
  return perform(Method::get, std::move(target), nullptr, true);
}

net::awaitable<FetchResult> HttpsClient::send(Method method, std::string target, std::optional<RequestBody> body) {
  // The body lives in this coroutine's frame while perform() runs.
  auto operation = perform(method, std::move(target), body ? &*body : nullptr, false);
  co_return co_await std::move(operation);
}

// fetch_timeout for one perform(): a timer that closes the connection in use when it
// fires (its pending operation then ends as cancelled, which perform_within() reports as
// the timeout). Shared with the timer's handler, which may run after perform() returned.
struct HttpsClient::Deadline {
  explicit Deadline(const net::any_io_executor& executor) : timer(executor) {}
  net::steady_timer timer;
  Connection* connection = nullptr;  // the one connecting or carrying the request; null between
  bool passed = false;
};

net::awaitable<FetchResult> HttpsClient::perform(Method method, std::string target, const RequestBody* body,
                                                 bool retry_stale) {
  auto deadline = std::make_shared<Deadline>(executor_);
  deadline->timer.expires_after(options_.fetch_timeout);
  deadline->timer.async_wait([deadline](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the request ended in time
    deadline->passed = true;
    if (deadline->connection) deadline->connection->close();
  });
  auto operation = perform_within(method, target, body, retry_stale, *deadline);
  FetchResult result = co_await std::move(operation);
  deadline->timer.cancel();
  deadline->connection = nullptr;
  if (deadline->passed) {
    co_return failed(FetchFailure::timeout,
                     "no complete answer within " + std::to_string(options_.fetch_timeout.count()) +
                         " ms (connect, request and the whole body: service.fetch_timeout_s)");
  }
  co_return result;
}

net::awaitable<FetchResult> HttpsClient::perform_within(Method method, const std::string& target,
                                                        const RequestBody* body, bool retry_stale, Deadline& deadline) {
  const uint64_t generation = impl_->close_generation;
  for (int round = 0;; ++round) {
    std::unique_ptr<Connection> connection = take_idle();
    const bool reused = connection != nullptr;
    if (!connection) {
      connection = std::make_unique<Connection>(executor_, impl_->peer, impl_->connection_options);
      Outcome connected;
      {
        Impl::Active active(impl_->active, connection.get());
        deadline.connection = connection.get();
        connected = co_await connection->connect();
        deadline.connection = nullptr;
      }
      if (deadline.passed) co_return cancelled();  // perform() reports the timeout
      if (impl_->close_generation != generation) co_return cancelled();
      if (!connected.ok()) co_return failed(*connection, connected);
      ++connections_opened_;
    }
    Outcome outcome;
    FetchResult result;
    {
      Impl::Active active(impl_->active, connection.get());
      deadline.connection = connection.get();
      if (deadline.passed) connection->close();  // passed while it was idle in the pool
      auto operation = exchange(*connection, method, target, body, outcome);
      result = co_await std::move(operation);
      deadline.connection = nullptr;
    }
    if (deadline.passed) {
      connection->close();
      co_return cancelled();  // perform() reports the timeout
    }
    if (impl_->close_generation != generation) co_return cancelled();
    // A kept-alive connection the server closed meanwhile fails before any byte of the
    // response, closed or reset: that request most likely never reached the server, so one
    // more try is safe for a GET. Not after a timeout: the server has it and is slow, and a
    // second copy would cost it twice and the job twice the deadline, uncounted.
    if (retry_stale && reused && outcome.failure == http_client::Failure::transport && outcome.nothing_received() &&
        round == 0) {
      continue;
    }
    if (result.failure == FetchFailure::none && connection->reusable()) {
      give_back(std::move(connection));
    } else {
      connection->close();
    }
    co_return result;
  }
}

}  // namespace hh::fetcher
