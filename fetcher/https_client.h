#pragma once
// GET requests to the service's host over HTTPS (HTTP/1.1, Beast + OpenSSL, C++20
// coroutines), with keep-alive connections reused between requests.
//
// Promises:
// - TLS: certificate chain verified (tls_context.h), the host name (or IP literal) checked
//   against the certificate, SNI sent for names. A failed check is
//   FetchFailure::certificate; no request is ever sent on an unverified connection.
// - Deadlines: connect_timeout covers resolve + TCP connect + TLS handshake;
//   read_timeout is the longest wait for the next bytes while writing the request or
//   reading the response (an inactivity deadline, re-armed per read, so a large body on a
//   slow link is fine and a stalled one is not).
// - Size: the decoded body never exceeds max_response_bytes (Content-Length checked
//   before reading; gzip bodies checked while inflating).
// - gzip: Accept-Encoding: gzip is sent and a gzip Content-Encoding is decoded; any other
//   encoding is a protocol failure.
// - The API key goes only in the configured header, on this one host; redirects are
//   never followed (a 3xx is returned as a status).
//
// Threading: one HttpsClient per io thread; every call runs on that thread. Concurrency
// is the caller's (the fetcher runs at most service.concurrency requests at once).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "fetcher/base_url.h"

namespace hh::fetcher {

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{60'000};
  uint64_t max_response_bytes = 256 * 1024 * 1024;
  std::string api_key_header = "x-vital-api-key";
  std::string api_key;                            // never logged
  std::string ca_file;                            // empty: system trust store
  size_t max_idle_connections = 4;                // kept open for reuse
  std::chrono::seconds max_idle_time{30};         // an idle connection older than this is closed, not reused
};

enum class FetchFailure {
  none,         // a response arrived: see status
  connect,      // resolve / TCP connect failed or timed out
  certificate,  // TLS peer verification failed (chain or host name): do not retry blindly
  tls,          // other TLS handshake failure
  timeout,      // no bytes within read_timeout
  transport,    // connection reset or closed before the response was complete
  too_large,    // body over max_response_bytes
  protocol,     // malformed HTTP, unsupported or corrupt Content-Encoding
  cancelled,    // close_all() during the request
};
std::string_view failure_name(FetchFailure failure);

struct FetchResult {
  FetchFailure failure = FetchFailure::none;
  std::string error;                 // failure != none: what happened, for last_error
  unsigned status = 0;               // failure == none
  std::optional<std::string> retry_after;  // the Retry-After header, as sent
  std::string body;                  // decoded; for non-2xx at most an excerpt
  uint64_t wire_bytes = 0;           // body bytes as received (before gunzip)
};

class HttpsClient {
 public:
  static Result<std::unique_ptr<HttpsClient>> create(boost::asio::any_io_executor executor, BaseUrl base,
                                                     ClientOptions options);
  ~HttpsClient();
  HttpsClient(const HttpsClient&) = delete;
  HttpsClient& operator=(const HttpsClient&) = delete;

  // GET `target` (path + query, starting with '/'). A request on a reused connection that
  // the server had closed meanwhile is retried once on a new connection.
  boost::asio::awaitable<FetchResult> get(std::string target);

  // Closes every connection: requests in progress end with FetchFailure::cancelled.
  void close_all();

  const BaseUrl& base() const { return base_; }
  uint64_t connections_opened() const { return connections_opened_.load(std::memory_order_relaxed); }

 private:
  struct Connection;
  HttpsClient(boost::asio::any_io_executor executor, BaseUrl base, ClientOptions options);
  boost::asio::awaitable<FetchResult> connect(std::unique_ptr<Connection>& out);
  boost::asio::awaitable<FetchResult> exchange(Connection& connection, const std::string& target,
                                               bool& nothing_received, bool& keep_alive);
  template <typename Stream>
  boost::asio::awaitable<FetchResult> exchange_on(Stream& stream, Connection& connection, const std::string& target,
                                                  bool& nothing_received, bool& keep_alive);
  std::unique_ptr<Connection> take_idle();
  void give_back(std::unique_ptr<Connection> connection);

  boost::asio::any_io_executor executor_;
  BaseUrl base_;
  ClientOptions options_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> connections_opened_{0};  // read by tests and metrics from other threads
};

}  // namespace hh::fetcher
