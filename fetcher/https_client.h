#pragma once
// Requests to the service's host over HTTPS (HTTP/1.1, Beast + OpenSSL, C++20 coroutines),
// with keep-alive connections reused between requests: GETs for the fetcher, and the
// POST, PATCH and DELETE calls of the commands that manage users, link codes, bulk
// connections and lab reports (service_calls.h, calls/).
//
// The connections are common/http_client/connection.h's; this client adds the pool, the
// request (API key, gzip) and the reading of the body.
//
// Promises:
// - TLS: certificate chain verified (common/http_client/tls_context.h), the host name (or
//   IP literal) checked against the certificate, SNI sent for names. A failed check is
//   FetchFailure::certificate; no request is ever sent on an unverified connection.
// - Deadlines: connect_timeout covers resolve + TCP connect + TLS handshake;
//   read_timeout is the longest wait for the next bytes while writing the request or
//   reading the response (an inactivity deadline, re-armed per read, so a stalled
//   connection fails early); fetch_timeout is one deadline for the whole request (connect,
//   send, the entire answer, a retry on a new connection included), so a server that
//   drips its answer a byte at a time cannot hold a fetch for ever (FetchFailure::timeout).
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

#include "common/http_client/outcome.h"
#include "common/result.h"
#include "fetcher/base_url.h"

namespace hh::http_client {
class Connection;
}

namespace hh::fetcher {

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{60'000};
  std::chrono::milliseconds fetch_timeout{600'000};  // one request whole, from connect to the last body byte
  uint64_t max_response_bytes = 256 * 1024 * 1024;
  std::string api_key_header = "x-vital-api-key";
  std::string api_key;                            // never logged
  std::string ca_file;                            // empty: system trust store
  size_t max_idle_connections = 4;                // kept open for reuse
  std::chrono::seconds max_idle_time{30};         // an idle connection older than this is closed, not reused
};

// How a fetch that got no usable response failed (none: a response arrived, see status).
// The client core's classes (common/http_client/outcome.h); this client adds too_large for
// a decoded body over the limit, protocol for an encoding it cannot decode, and cancelled
// for close_all().
using FetchFailure = http_client::Failure;
using http_client::failure_name;

// The request methods the service's endpoints use.
enum class Method { get, post, patch, delete_ };

// A request body and its Content-Type (JSON, or multipart/form-data for an upload).
struct RequestBody {
  std::string content_type;
  std::string bytes;
};

struct FetchResult {
  FetchFailure failure = FetchFailure::none;
  std::string error;                 // failure != none: what happened, for last_error
  unsigned status = 0;               // failure == none
  std::optional<std::string> retry_after;  // the Retry-After header, as sent
  std::string body;                  // decoded; for non-2xx at most an excerpt
  bool body_cut = false;             // non-2xx: the excerpt is shorter than the answer
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
  // POST, PATCH or DELETE `target`, with `body` when given, sent once: a request that
  // changes something on the service is never repeated here, even on a reused connection
  // that turns out to be closed. A POST without a body is sent with Content-Length: 0.
  boost::asio::awaitable<FetchResult> send(Method method, std::string target,
                                           std::optional<RequestBody> body = std::nullopt);

  // Closes every connection: requests in progress end with FetchFailure::cancelled.
  void close_all();

  const BaseUrl& base() const { return base_; }
  uint64_t connections_opened() const { return connections_opened_.load(std::memory_order_relaxed); }

 private:
  HttpsClient(boost::asio::any_io_executor executor, BaseUrl base, ClientOptions options);
  // `retry_stale`: send once more on a new connection when a reused one had been closed.
  boost::asio::awaitable<FetchResult> perform(Method method, std::string target, const RequestBody* body,
                                              bool retry_stale);
  struct Deadline;
  boost::asio::awaitable<FetchResult> perform_within(Method method, const std::string& target, const RequestBody* body,
                                                     bool retry_stale, Deadline& deadline);
  // One request on `connection`; `outcome` tells how the connection fared.
  boost::asio::awaitable<FetchResult> exchange(http_client::Connection& connection, Method method,
                                               const std::string& target, const RequestBody* body,
                                               http_client::Outcome& outcome);
  // Sends the request head (and body) on `connection`.
  boost::asio::awaitable<http_client::Outcome> write_request(http_client::Connection& connection, Method method,
                                                             const std::string& target, const RequestBody* body);
  std::unique_ptr<http_client::Connection> take_idle();
  void give_back(std::unique_ptr<http_client::Connection> connection);

  boost::asio::any_io_executor executor_;
  BaseUrl base_;
  ClientOptions options_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> connections_opened_{0};  // read by tests and metrics from other threads
};

}  // namespace hh::fetcher
