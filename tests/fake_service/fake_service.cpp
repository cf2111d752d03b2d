#include "tests/fake_service/fake_service.h"

#include <openssl/ssl.h>
#include <zlib.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/asio_token.h"
#include "common/json_writer.h"
#include "common/timestamp.h"
#include "tests/fake_service/fake_bodies.h"
#include "tests/fake_service/interface_endpoints.h"
#include "tests/fake_service/test_certificates.h"

namespace hh::fake {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
constexpr auto kSessionTimeout = std::chrono::seconds(30);
// Request bodies up to this size are read (a 10 MB lab report in a form, and more, to see
// the service's own refusal).
constexpr uint64_t kMaxRequestBodyBytes = 16 * 1024 * 1024;

void append_string_array(std::string& out, const std::vector<std::string>& items) {
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    json::append_string(out, items[i]);
  }
  out.push_back(']');
}

std::string fault_name(Fault::Kind kind) {
  switch (kind) {
    case Fault::Kind::none: return "none";
    case Fault::Kind::status: return "status";
    case Fault::Kind::stall_head: return "stall_head";
    case Fault::Kind::stall_body: return "stall_body";
    case Fault::Kind::drop_mid_body: return "drop_mid_body";
    case Fault::Kind::malformed_json: return "malformed_json";
    case Fault::Kind::close_without_response: return "close_without_response";
    case Fault::Kind::drip_body: return "drip_body";
    case Fault::Kind::bytes_after_answer: return "bytes_after_answer";
  }
  return "?";
}

}  // namespace

struct FakeService::Impl {
  FakeOptions options;
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  std::shared_ptr<ssl::context> tls;
  std::string ca_pem;
  std::thread thread;

  mutable std::mutex mutex;
  std::map<std::string, std::deque<std::pair<Fault, int>>> faults;  // GUARDED_BY(mutex)
  std::map<std::string, size_t> stream_points;                       // GUARDED_BY(mutex)
  std::map<size_t, std::shared_ptr<const std::string>> stream_cache;  // GUARDED_BY(mutex)
  std::vector<RecordedRequest> requests;                             // GUARDED_BY(mutex)
  size_t accepted = 0;                                               // GUARDED_BY(mutex)
  size_t handshake_failures = 0;                                     // GUARDED_BY(mutex)
  std::condition_variable handshake_failed;  // notified when handshake_failures grows
  size_t in_progress = 0, max_in_progress = 0;                       // GUARDED_BY(mutex)
  RefreshAnswer refresh_answer;                                      // GUARDED_BY(mutex)
  bool deregister_success = true;                                    // GUARDED_BY(mutex)
  InterfaceEndpoints endpoints;  // the rest of the interface; thread-safe itself

  std::set<beast::tcp_stream*> idle;  // io thread only: sessions waiting for a request
  uint64_t next_connection_id = 1;    // io thread only

  std::optional<Fault> take_fault(const std::string& path) {
    std::lock_guard lock(mutex);
    for (const std::string& key : {path, std::string("*")}) {
      auto it = faults.find(key);
      if (it == faults.end() || it->second.empty()) continue;
      auto& [fault, times] = it->second.front();
      Fault taken = fault;
      if (times > 0 && --times == 0) it->second.pop_front();
      return taken;
    }
    return std::nullopt;
  }

  std::shared_ptr<const std::string> stream_for(const std::string& workout_id) {
    std::lock_guard lock(mutex);
    auto it = stream_points.find(workout_id);
    return stream_of(it == stream_points.end() ? options.default_stream_points : it->second);
  }

  // A stream body of `points`, built once per size. Caller holds `mutex`.
  std::shared_ptr<const std::string> stream_of(size_t points) {
    auto& cached = stream_cache[points];
    if (!cached) cached = std::make_shared<const std::string>(stream_body(points));
    return cached;
  }

  // POST /v2/user/refresh/{user_id}: the interface's Refresh result.
  Reply refresh(const std::string& user_id, const std::map<std::string, std::string>& query) {
    if (!fake_is_uuid(user_id)) return detail(422, "user_id must be a UUID");
    double timeout = 10;
    if (auto it = query.find("timeout"); it != query.end()) {
      const std::string& text = it->second;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), timeout);
      if (ec != std::errc() || end != text.data() + text.size()) return detail(422, "timeout must be a number");
    }
    if (timeout < 5 || timeout > 60) return detail(422, "timeout must be between 5 and 60");
    RefreshAnswer answer;
    {
      std::lock_guard lock(mutex);
      answer = refresh_answer;
    }
    std::string body = "{\"success\":";
    body += answer.success ? "true" : "false";
    body += ",\"user_id\":";
    json::append_string(body, user_id);
    body += ",\"refreshed_sources\":";
    append_string_array(body, answer.refreshed_sources);
    body += ",\"in_progress_sources\":";
    append_string_array(body, answer.in_progress_sources);
    body += ",\"failed_sources\":";
    append_string_array(body, answer.failed_sources);
    body += "}";
    return Reply{200, std::move(body), std::nullopt};
  }

  // DELETE /v2/user/{user_id}/{provider}: {"success": …}; any provider (the enum is
  // non-exhaustive).
  Reply deregister(const std::string& user_id, const std::string& provider) {
    if (!fake_is_uuid(user_id)) return detail(422, "user_id must be a UUID");
    if (provider.empty()) return detail(422, "provider is required");
    std::lock_guard lock(mutex);
    return Reply{200, deregister_success ? "{\"success\":true}" : "{\"success\":false}", std::nullopt};
  }

  Reply route(const bhttp::request<bhttp::string_body>& request, const std::vector<std::string>& segments,
              const std::map<std::string, std::string>& query,
              const std::vector<std::pair<std::string, std::string>>& query_list) {
    InterfaceRequest call{std::string(request.method_string()), segments, query_list,
                          std::string(request[bhttp::field::content_type]), request.body()};
    if (auto reply = endpoints.route(call)) return std::move(*reply);
    const bool user_call = segments.size() == 4 && segments[0] == "v2" && segments[1] == "user";
    if (request.method() == bhttp::verb::post && user_call && segments[2] == "refresh") {
      return refresh(segments[3], query);
    }
    if (request.method() == bhttp::verb::delete_ && user_call && segments[2] != "refresh") {
      return deregister(segments[2], segments[3]);
    }
    if (request.method() != bhttp::verb::get) return detail(405, "Method Not Allowed");
    const auto param = [&](const std::string& key) -> std::string {
      auto it = query.find(key);
      return it == query.end() ? std::string() : it->second;
    };
    // /v2/timeseries/workouts/{workout_id}/stream
    if (segments.size() == 5 && segments[0] == "v2" && segments[1] == "timeseries" && segments[2] == "workouts" &&
        segments[4] == "stream") {
      return Reply{200, *stream_for(segments[3]), std::nullopt};
    }
    const auto window = [&]() -> std::optional<std::pair<int64_t, int64_t>> {
      auto start = parse_iso8601_ms(param("start_date"));
      auto end = parse_iso8601_ms(param("end_date"));
      if (!start || !end || *end < *start) return std::nullopt;
      return std::pair{*start, *end};
    };
    // /v2/providers: the provider list, a bare JSON array
    if (segments.size() == 2 && segments[0] == "v2" && segments[1] == "providers") {
      return Reply{200, providers_body(), std::nullopt};
    }
    // Whom and which provider an answer is about: those asked for, unless the service lies.
    const auto answered = [](const std::string& lie, const std::string& asked) { return lie.empty() ? asked : lie; };
    // /v2/summary/profile/{user_id}?provider=: one object; the endpoint takes no window
    if (segments.size() == 4 && segments[0] == "v2" && segments[1] == "summary" && segments[2] == "profile") {
      return Reply{200,
                   profile_body(answered(options.answer_user_id, segments[3]),
                                answered(options.answer_provider, param("provider"))),
                   std::nullopt};
    }
    // /v2/summary/{resource}/{user_id}
    if (segments.size() == 4 && segments[0] == "v2" && segments[1] == "summary") {
      auto range = window();
      if (!range) return detail(422, "start_date and end_date are required");
      return Reply{200,
                   summaries_body(segments[2], answered(options.answer_user_id, segments[3]),
                                  answered(options.answer_provider, param("provider")), range->first, range->second,
                                  options.max_summaries_per_page),
                   std::nullopt};
    }
    // /v2/timeseries/{user_id}/{resource}/grouped
    if (segments.size() == 5 && segments[0] == "v2" && segments[1] == "timeseries" && segments[4] == "grouped") {
      auto range = window();
      if (!range) return detail(422, "start_date and end_date are required");
      size_t page = 0;
      if (!param("cursor").empty()) {
        page = parse_cursor(param("cursor"));
        if (page >= options.timeseries_pages) return detail(400, "invalid cursor");
      }
      const std::string provider =
          answered(options.answer_provider, param("provider").empty() ? "garmin" : param("provider"));
      return Reply{200,
                   grouped_body(segments[3], provider, range->first, range->second, page, options.timeseries_pages,
                                options.samples_per_page,
                                options.cursor_repeats ? std::optional<size_t>(options.timeseries_pages - 1)
                                : options.cursor_loops ? std::optional<size_t>(1)
                                                       : std::nullopt),
                   std::nullopt};
    }
    return detail(404, "Not Found");
  }

  template <typename Stream>
  net::awaitable<bool> write_reply(Stream& stream, const Reply& reply, bool keep_alive, bool accepts_gzip,
                                   const std::optional<Fault>& fault) {
    bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(reply.status), 11};
    response.set(bhttp::field::server, "fake-service");
    response.set(bhttp::field::content_type, "application/json");
    if (reply.retry_after) response.set(bhttp::field::retry_after, *reply.retry_after);
    bool use_gzip, use_chunked;
    {
      std::lock_guard lock(mutex);
      use_gzip = options.gzip;
      use_chunked = options.chunked;
    }
    const bool gzip_error = fault && fault->kind == Fault::Kind::status && fault->gzip_body;
    if (accepts_gzip && ((use_gzip && reply.status / 100 == 2) || gzip_error)) {
      response.body() = gzip(reply.body);
      response.set(bhttp::field::content_encoding, "gzip");
    } else {
      response.body() = reply.body;
    }
    const bool partial = fault && (fault->kind == Fault::Kind::stall_body || fault->kind == Fault::Kind::drop_mid_body ||
                                   fault->kind == Fault::Kind::drip_body);
    response.keep_alive(keep_alive && !partial);
    if (use_chunked && !partial) {
      response.chunked(true);
    } else {
      response.prepare_payload();
    }
    auto& transport = beast::get_lowest_layer(stream);
    transport.expires_after(kSessionTimeout);
    if (!partial) {
      auto [ec, n] = co_await bhttp::async_write(stream, response, use_tuple);
      (void)n;
      if (ec || !fault || fault->kind != Fault::Kind::bytes_after_answer) co_return !ec;
      net::steady_timer timer(io);
      timer.expires_after(fault->stall);
      co_await timer.async_wait(use_tuple);
      auto [extra_ec, extra_n] = co_await net::async_write(stream, net::buffer(fault->body), use_tuple);
      (void)extra_n;
      co_return !extra_ec;
    }
    bhttp::response_serializer<bhttp::string_body> serializer{response};
    {
      auto [ec, n] = co_await bhttp::async_write_header(stream, serializer, use_tuple);
      (void)n;
      if (ec) co_return false;
    }
    const std::string& body = response.body();
    if (fault->kind == Fault::Kind::drip_body) {
      // A byte at a time: each read of the client gets bytes well within any inactivity
      // deadline, the whole body takes body.size() * stall.
      net::steady_timer timer(io);
      for (size_t i = 0; i < body.size(); ++i) {
        timer.expires_after(fault->stall);
        co_await timer.async_wait(use_tuple);
        transport.expires_after(kSessionTimeout);
        auto [ec, n] = co_await net::async_write(stream, net::buffer(body.data() + i, 1), use_tuple);
        (void)n;
        if (ec) co_return false;
      }
      co_return false;
    }
    const size_t half = body.size() / 2;
    {
      auto [ec, n] = co_await net::async_write(stream, net::buffer(body.data(), half), use_tuple);
      (void)n;
      if (ec) co_return false;
    }
    if (fault->kind == Fault::Kind::drop_mid_body) co_return false;  // the caller closes
    net::steady_timer timer(io);
    timer.expires_after(fault->stall);
    co_await timer.async_wait(use_tuple);
    transport.expires_after(kSessionTimeout);
    auto [ec, n] = co_await net::async_write(stream, net::buffer(body.data() + half, body.size() - half), use_tuple);
    (void)n;
    co_return false;  // close after a stalled body either way
  }

  template <typename Stream>
  net::awaitable<void> serve(Stream& stream, uint64_t connection_id, std::string sni) {
    auto& transport = beast::get_lowest_layer(stream);
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(kMaxRequestBodyBytes);
      idle.insert(&transport);
      transport.expires_after(kSessionTimeout);
      auto [read_ec, n] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
      (void)n;
      idle.erase(&transport);
      if (read_ec) co_return;
      bhttp::request<bhttp::string_body> request = parser.release();
      struct InProgress {
        Impl& impl;
        explicit InProgress(Impl& i) : impl(i) {
          std::lock_guard lock(impl.mutex);
          impl.max_in_progress = std::max(impl.max_in_progress, ++impl.in_progress);
        }
        ~InProgress() {
          std::lock_guard lock(impl.mutex);
          --impl.in_progress;
        }
      } in_progress{*this};

      RecordedRequest record;
      record.method = std::string(request.method_string());
      record.target = std::string(request.target());
      record.connection_id = connection_id;
      record.sni = sni;
      record.accept_encoding = std::string(request[bhttp::field::accept_encoding]);
      record.content_type = std::string(request[bhttp::field::content_type]);
      record.body = request.body();
      std::vector<std::string> segments;
      std::map<std::string, std::string> query;
      if (auto url = boost::urls::parse_origin_form(request.target())) {
        for (auto segment : url->segments()) segments.emplace_back(segment.begin(), segment.end());
        for (auto param : url->params()) {
          query[std::string(param.key)] = std::string(param.value);
          record.query_list.emplace_back(std::string(param.key), std::string(param.value));
        }
        for (const auto& s : segments) record.path += "/" + s;
        record.query = query;
      }
      record.api_key = std::string(request[options.api_key_header]);
      record.management_key = std::string(request["X-Management-Key"]);
      // The management endpoint takes only the management key; every other one only the team's.
      record.authorized = InterfaceEndpoints::is_management_path(segments)
                              ? record.management_key == options.management_key && !options.management_key.empty()
                              : record.api_key == options.api_key && !options.api_key.empty();

      Reply reply;
      std::optional<Fault> fault;
      if (!record.authorized) {
        reply = detail(401, "Invalid API key");
      } else {
        fault = take_fault(record.path);
        reply = route(request, segments, query, record.query_list);
        if (fault) {
          record.fault = fault_name(fault->kind);
          if (fault->kind == Fault::Kind::status) {
            reply = fault->body.empty() ? detail(fault->status, "injected fault")
                                        : Reply{fault->status, fault->body, std::nullopt};
            reply.retry_after = fault->retry_after;
          } else if (fault->kind == Fault::Kind::malformed_json) {
            reply.body.resize(reply.body.size() / 2);
          }
        }
      }
      // Recorded on arrival, so a test can act while the answer is stalled.
      record.status = fault && fault->kind == Fault::Kind::close_without_response ? 0 : reply.status;
      {
        std::lock_guard lock(mutex);
        requests.push_back(record);
      }
      if (fault && fault->kind == Fault::Kind::close_without_response) co_return;
      if (fault && fault->kind == Fault::Kind::stall_head) {
        net::steady_timer timer(io);
        timer.expires_after(fault->stall);
        co_await timer.async_wait(use_tuple);
      }
      const bool keep_alive = request.keep_alive();
      const bool accepts_gzip = record.accept_encoding.find("gzip") != std::string::npos;
      if (!co_await write_reply(stream, reply, keep_alive, accepts_gzip, fault)) co_return;
      if (!keep_alive) co_return;
    }
  }

  net::awaitable<void> session(tcp::socket socket) {
    const uint64_t connection_id = next_connection_id++;
    {
      std::lock_guard lock(mutex);
      ++accepted;
    }
    if (!tls) {
      beast::tcp_stream stream(std::move(socket));
      auto serving = serve(stream, connection_id, "");  // not inside co_await: GCC PR 100611
      co_await std::move(serving);
      beast::error_code ec;
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
    beast::get_lowest_layer(stream).expires_after(kSessionTimeout);
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, use_tuple);
    if (ec) {
      {
        std::lock_guard lock(mutex);
        ++handshake_failures;
      }
      handshake_failed.notify_all();
      co_return;
    }
    const char* name = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name);
    auto serving = serve(stream, connection_id, name ? name : "");
    co_await std::move(serving);
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  net::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
      if (ec) co_return;
      net::co_spawn(io, session(std::move(socket)), net::detached);
    }
  }
};

FakeService::FakeService(FakeOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.tls != TlsMode::plain) {
    const CertificateAuthority trusted = make_certificate_authority("healthhook test CA");
    impl_->ca_pem = trusted.cert_pem;
    ServerCertificate server;
    if (impl_->options.tls == TlsMode::valid) {
      server = make_server_certificate(trusted, {"localhost"}, {"127.0.0.1"});
    } else if (impl_->options.tls == TlsMode::wrong_host) {
      server = make_server_certificate(trusted, {"wrong.example"}, {});
    } else {
      const CertificateAuthority unknown = make_certificate_authority("unknown test CA");
      server = make_server_certificate(unknown, {"localhost"}, {"127.0.0.1"});
    }
    impl_->tls = std::make_shared<ssl::context>(ssl::context::tls_server);
    impl_->tls->use_certificate_chain(net::buffer(server.cert_pem));
    impl_->tls->use_private_key(net::buffer(server.key_pem), ssl::context::pem);
  }
  const tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(endpoint);
  impl_->acceptor.listen();
  net::co_spawn(impl_->io, impl_->accept_loop(), net::detached);
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

FakeService::~FakeService() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t FakeService::port() const { return impl_->acceptor.local_endpoint().port(); }

std::string FakeService::base_url() const {
  return impl_->options.tls == TlsMode::plain ? "http://127.0.0.1:" + std::to_string(port())
                                              : "https://localhost:" + std::to_string(port());
}

const std::string& FakeService::ca_pem() const { return impl_->ca_pem; }

void FakeService::inject(const std::string& path, Fault fault, int times) {
  std::lock_guard lock(impl_->mutex);
  impl_->faults[path].emplace_back(std::move(fault), times == 0 ? 1 : times);
}

void FakeService::clear_faults() {
  std::lock_guard lock(impl_->mutex);
  impl_->faults.clear();
}

void FakeService::set_stream_points(const std::string& workout_id, size_t points) {
  // The body is built here, not at the first request: like the real service, the fake
  // starts answering at once. Building a 30 MB stream takes seconds under ThreadSanitizer,
  // longer than the fetcher waits for a response's first bytes (scripts/tsan).
  std::lock_guard lock(impl_->mutex);
  impl_->stream_points[workout_id] = points;
  impl_->stream_of(points);
}

void FakeService::set_gzip(bool gzip) {
  std::lock_guard lock(impl_->mutex);
  impl_->options.gzip = gzip;
}

void FakeService::set_chunked(bool chunked) {
  std::lock_guard lock(impl_->mutex);
  impl_->options.chunked = chunked;
}

void FakeService::set_refresh_answer(RefreshAnswer answer) {
  std::lock_guard lock(impl_->mutex);
  impl_->refresh_answer = std::move(answer);
}

InterfaceEndpoints& FakeService::interface() { return impl_->endpoints; }

void FakeService::set_deregister_success(bool success) {
  std::lock_guard lock(impl_->mutex);
  impl_->deregister_success = success;
}

std::vector<RecordedRequest> FakeService::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

std::vector<RecordedRequest> FakeService::requests_except(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  std::vector<RecordedRequest> out;
  for (const auto& request : impl_->requests) {
    if (request.path != path) out.push_back(request);
  }
  return out;
}

size_t FakeService::request_count(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  size_t count = 0;
  for (const auto& request : impl_->requests) count += request.path == path ? 1 : 0;
  return count;
}

size_t FakeService::connections_accepted() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

size_t FakeService::handshakes_failed() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->handshake_failures;
}

size_t FakeService::wait_for_handshakes_failed(size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(impl_->mutex);
  impl_->handshake_failed.wait_for(lock, limit, [&] { return impl_->handshake_failures >= count; });
  return impl_->handshake_failures;
}

size_t FakeService::max_concurrent_requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->max_in_progress;
}

size_t FakeService::close_idle_connections() {
  std::promise<size_t> closed;
  net::post(impl_->io, [impl = impl_.get(), &closed] {
    size_t count = 0;
    for (beast::tcp_stream* transport : impl->idle) {
      beast::error_code ec;
      transport->socket().shutdown(tcp::socket::shutdown_both, ec);
      transport->socket().close(ec);
      ++count;
    }
    impl->idle.clear();
    closed.set_value(count);
  });
  return closed.get_future().get();
}

}  // namespace hh::fake
