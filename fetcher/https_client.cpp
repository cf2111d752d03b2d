#include "fetcher/https_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <set>

#include "fetcher/gzip_decoder.h"
#include "fetcher/tls_context.h"

namespace hh::fetcher {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Boost 1.81's completion token for error codes as values (style.md).
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

constexpr size_t kChunkBytes = 64 * 1024;         // one read into the body, then decoded/appended
constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kErrorExcerptBytes = 512;        // of a non-2xx body, for last_error
constexpr uint64_t kMaxErrorBodyBytes = 64 * 1024;  // a longer non-2xx body closes the connection instead

FetchResult failed(FetchFailure failure, std::string error) {
  FetchResult result;
  result.failure = failure;
  result.error = std::move(error);
  return result;
}

std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

bool is_ip_literal(const std::string& host) {
  error_code ec;
  (void)net::ip::make_address(host, ec);
  return !ec;
}

// SNI and the name the certificate must carry (RFC 6125 via OpenSSL's X509_check_host).
// IP literals get no SNI (RFC 6066 forbids it) and are matched against IP SANs.
bool configure_peer_check(SSL* ssl, const std::string& host) {
  if (is_ip_literal(host)) {
    return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  }
  if (SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) return false;
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, host.c_str()) == 1;
}

FetchResult read_failure(const error_code& ec, std::chrono::milliseconds read_timeout, std::string_view while_doing) {
  if (ec == beast::error::timeout) {
    return failed(FetchFailure::timeout, std::string(while_doing) + ": no data for " + ms_text(read_timeout));
  }
  if (ec == bhttp::error::body_limit) return failed(FetchFailure::too_large, "response body over max_response_bytes");
  if (ec == bhttp::error::partial_message || ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset) {
    return failed(FetchFailure::transport, std::string(while_doing) + ": connection closed by the server (" +
                                               ec.message() + ")");
  }
  if (ec == ssl::error::stream_truncated) {
    // Not ignorable here: the message is incomplete (style.md).
    return failed(FetchFailure::transport, std::string(while_doing) + ": TLS stream truncated");
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::need_buffer).category()) {
    return failed(FetchFailure::protocol, std::string(while_doing) + ": malformed HTTP (" + ec.message() + ")");
  }
  return failed(FetchFailure::transport, std::string(while_doing) + ": " + ec.message());
}

}  // namespace

std::string_view failure_name(FetchFailure failure) {
  switch (failure) {
    case FetchFailure::none: return "none";
    case FetchFailure::connect: return "connect";
    case FetchFailure::certificate: return "certificate";
    case FetchFailure::tls: return "tls";
    case FetchFailure::timeout: return "timeout";
    case FetchFailure::transport: return "transport";
    case FetchFailure::too_large: return "too_large";
    case FetchFailure::protocol: return "protocol";
    case FetchFailure::cancelled: return "cancelled";
  }
  return "unknown";
}

struct HttpsClient::Connection {
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  std::unique_ptr<beast::tcp_stream> plain;
  beast::flat_buffer buffer;  // bytes read past the last message stay here for the next one
  std::chrono::steady_clock::time_point idle_since;

  beast::tcp_stream& transport() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  void close() {
    error_code ec;
    transport().socket().shutdown(tcp::socket::shutdown_both, ec);
    transport().socket().close(ec);
  }
};

struct HttpsClient::Impl {
  std::shared_ptr<ssl::context> tls_context;        // null for http://127.0.0.1
  std::deque<std::unique_ptr<Connection>> idle;     // most recently used at the back
  std::set<Connection*> active;                     // connecting or in a request (close_all)
  std::set<tcp::resolver*> resolving;
  uint64_t close_generation = 0;                    // bumped by close_all
};

Result<std::unique_ptr<HttpsClient>> HttpsClient::create(net::any_io_executor executor, BaseUrl base,
                                                         ClientOptions options) {
  std::unique_ptr<HttpsClient> client(new HttpsClient(std::move(executor), std::move(base), std::move(options)));
  if (client->base_.tls) {
    auto context = make_client_tls_context(client->options_.ca_file);
    if (!context) return fail(context.error());
    client->impl_->tls_context = std::move(*context);
  } else if (client->base_.host != "127.0.0.1") {
    return fail("plain http is only allowed for 127.0.0.1");  // BaseUrl::parse refuses it too
  }
  return client;
}

HttpsClient::HttpsClient(net::any_io_executor executor, BaseUrl base, ClientOptions options)
    : executor_(std::move(executor)), base_(std::move(base)), options_(std::move(options)),
      impl_(std::make_unique<Impl>()) {}

HttpsClient::~HttpsClient() = default;

void HttpsClient::close_all() {
  ++impl_->close_generation;
  for (tcp::resolver* resolver : impl_->resolving) resolver->cancel();
  for (Connection* connection : impl_->active) connection->close();
  for (auto& connection : impl_->idle) connection->close();
  impl_->idle.clear();
}

std::unique_ptr<HttpsClient::Connection> HttpsClient::take_idle() {
  const auto now = std::chrono::steady_clock::now();
  while (!impl_->idle.empty()) {
    std::unique_ptr<Connection> connection = std::move(impl_->idle.back());
    impl_->idle.pop_back();
    if (now - connection->idle_since < options_.max_idle_time && connection->transport().socket().is_open()) {
      return connection;
    }
    connection->close();
  }
  return nullptr;
}

void HttpsClient::give_back(std::unique_ptr<Connection> connection) {
  connection->idle_since = std::chrono::steady_clock::now();
  connection->transport().expires_never();
  impl_->idle.push_back(std::move(connection));
  while (impl_->idle.size() > options_.max_idle_connections) {
    impl_->idle.front()->close();
    impl_->idle.pop_front();
  }
}

net::awaitable<FetchResult> HttpsClient::connect(std::unique_ptr<Connection>& out) {
  auto connection = std::make_unique<Connection>();
  if (base_.tls) {
    connection->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(executor_, *impl_->tls_context);
  } else {
    connection->plain = std::make_unique<beast::tcp_stream>(executor_);
  }
  const std::string where = base_.host + ":" + std::to_string(base_.port);
  // One deadline for resolve + connect + handshake.
  const auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;

  tcp::resolver resolver(executor_);
  net::steady_timer resolve_timer(executor_);
  resolve_timer.expires_at(deadline);
  resolve_timer.async_wait([&resolver](const error_code& ec) {
    if (!ec) resolver.cancel();
  });
  impl_->resolving.insert(&resolver);
  const std::string service = std::to_string(base_.port);  // named: no temporaries in a co_await (GCC PR 100611)
  auto [resolve_ec, endpoints] = co_await resolver.async_resolve(base_.host, service, use_tuple);
  impl_->resolving.erase(&resolver);
  resolve_timer.cancel();
  if (resolve_ec) {
    co_return failed(FetchFailure::connect, "cannot resolve " + base_.host + ": " +
                                                (resolve_ec == net::error::operation_aborted
                                                     ? "timed out or cancelled"
                                                     : resolve_ec.message()));
  }

  impl_->active.insert(connection.get());
  struct Untrack {
    std::set<Connection*>& set;
    Connection* connection;
    ~Untrack() { set.erase(connection); }
  } untrack{impl_->active, connection.get()};

  auto& transport = connection->transport();
  transport.expires_at(deadline);
  auto [connect_ec, endpoint] = co_await transport.async_connect(endpoints, use_tuple);
  (void)endpoint;
  if (connect_ec) {
    co_return failed(FetchFailure::connect, connect_ec == beast::error::timeout
                                                ? "connecting to " + where + " timed out after " +
                                                      ms_text(options_.connect_timeout)
                                                : "cannot connect to " + where + ": " + connect_ec.message());
  }
  if (connection->tls) {
    SSL* ssl = connection->tls->native_handle();
    if (!configure_peer_check(ssl, base_.host)) {
      co_return failed(FetchFailure::tls, "TLS: cannot set the expected host name " + base_.host);
    }
    auto [handshake_ec] = co_await connection->tls->async_handshake(ssl::stream_base::client, use_tuple);
    if (handshake_ec) {
      const long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) {
        co_return failed(FetchFailure::certificate, "TLS certificate of " + base_.host + " rejected: " +
                                                        X509_verify_cert_error_string(verify));
      }
      if (handshake_ec == beast::error::timeout) {
        co_return failed(FetchFailure::connect,
                         "TLS handshake with " + where + " timed out after " + ms_text(options_.connect_timeout));
      }
      co_return failed(FetchFailure::tls, "TLS handshake with " + where + " failed: " + handshake_ec.message());
    }
  }
  transport.expires_never();
  ++connections_opened_;
  out = std::move(connection);
  co_return FetchResult{};
}

template <typename Stream>
net::awaitable<FetchResult> HttpsClient::exchange_on(Stream& stream, Connection& connection,
                                                     const std::string& target, bool& nothing_received,
                                                     bool& keep_alive) {
  nothing_received = true;
  keep_alive = false;
  auto& transport = connection.transport();

  bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
  request.set(bhttp::field::host, base_.authority());
  request.set(bhttp::field::user_agent, "healthhook");
  request.set(bhttp::field::accept, "application/json");
  request.set(bhttp::field::accept_encoding, "gzip");
  request.set(options_.api_key_header, options_.api_key);
  transport.expires_after(options_.read_timeout);
  {
    auto [ec, n] = co_await bhttp::async_write(stream, request, use_tuple);
    (void)n;
    if (ec) co_return read_failure(ec, options_.read_timeout, "sending the request");
  }

  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(options_.max_response_bytes);  // a larger Content-Length fails with the header
  transport.expires_after(options_.read_timeout);
  {
    auto [ec, n] = co_await bhttp::async_read_header(stream, connection.buffer, parser, use_tuple);
    (void)n;
    if (ec) {
      nothing_received = !parser.got_some();
      co_return read_failure(ec, options_.read_timeout, "waiting for the response");
    }
  }
  nothing_received = false;

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
  if (success && gzip) decoder.emplace();
  const uint64_t limit = options_.max_response_bytes;
  if (success && !gzip && parser.content_length()) {
    result.body.reserve(static_cast<size_t>(*parser.content_length()));  // at most `limit` (body_limit)
  }

  auto chunk = std::make_unique<char[]>(kChunkBytes);
  while (!parser.is_done()) {
    response.body().data = chunk.get();
    response.body().size = kChunkBytes;
    transport.expires_after(options_.read_timeout);
    auto [ec, n] = co_await bhttp::async_read(stream, connection.buffer, parser, use_tuple);
    (void)n;
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return read_failure(ec, options_.read_timeout, "reading the response body");
    const size_t got = kChunkBytes - response.body().size;
    result.wire_bytes += got;
    const std::string_view bytes(chunk.get(), got);
    if (!success) {
      // Kept only as an excerpt for last_error; the status is what counts.
      const size_t room = kErrorExcerptBytes - std::min(kErrorExcerptBytes, result.body.size());
      result.body.append(bytes.substr(0, room));
      if (result.wire_bytes > kMaxErrorBodyBytes) co_return result;  // not worth draining: close
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
      if (result.body.size() + got > limit) {
        co_return failed(FetchFailure::too_large, "response body over max_response_bytes (" + std::to_string(limit) + ")");
      }
      result.body.append(bytes);
    }
  }
  if (decoder && !decoder->finished()) {
    co_return failed(FetchFailure::protocol, "gzip body ended before its trailer");
  }
  transport.expires_never();
  keep_alive = parser.keep_alive();
  co_return result;
}

net::awaitable<FetchResult> HttpsClient::exchange(Connection& connection, const std::string& target,
                                                  bool& nothing_received, bool& keep_alive) {
  if (connection.tls) co_return co_await exchange_on(*connection.tls, connection, target, nothing_received, keep_alive);
  co_return co_await exchange_on(*connection.plain, connection, target, nothing_received, keep_alive);
}

net::awaitable<FetchResult> HttpsClient::get(std::string target) {
  const uint64_t generation = impl_->close_generation;
  for (int round = 0;; ++round) {
    std::unique_ptr<Connection> connection = take_idle();
    const bool reused = connection != nullptr;
    if (!connection) {
      FetchResult connected = co_await connect(connection);
      if (impl_->close_generation != generation) co_return failed(FetchFailure::cancelled, "cancelled (stopping)");
      if (connected.failure != FetchFailure::none) co_return connected;
    }
    impl_->active.insert(connection.get());
    bool nothing_received = false;
    bool keep_alive = false;
    FetchResult result = co_await exchange(*connection, target, nothing_received, keep_alive);
    impl_->active.erase(connection.get());
    if (impl_->close_generation != generation) co_return failed(FetchFailure::cancelled, "cancelled (stopping)");
    // A kept-alive connection the server closed meanwhile fails before any byte of the
    // response: that request never reached the server, so one more try is safe (GET).
    if (result.failure != FetchFailure::none && reused && nothing_received && round == 0) continue;
    if (result.failure == FetchFailure::none && keep_alive) {
      give_back(std::move(connection));
    } else {
      connection->close();
    }
    co_return result;
  }
}

}  // namespace hh::fetcher
