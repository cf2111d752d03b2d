// The fake customer backend (fake_backend.h) against a small client written here with
// Beast: signatures, the fault plan, dedup, keep-alive, TLS, concurrency and stop().
#include "tests/forward/fake_backend.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "receiver/signature/webhook_signature.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(fake_backend_test)

namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using hh::test::FakeBackend;
using namespace std::chrono_literals;

const std::string kSecret = hh::test::random_secret();
const std::string kOtherSecret = hh::test::random_secret();

struct Reply {
  unsigned status = 0;  // 0: the connection closed (or failed) without an answer
  std::string retry_after;
  std::string body;
};

// One connection to the backend, kept alive across requests; never reconnects, so a test
// sees what the server did with the connection. Every step is bounded (async under
// run_for), so a server that never answers fails the test instead of hanging it.
class Client {
 public:
  // TLS when ca_pem is not empty: trusts only that CA and checks the name "localhost".
  explicit Client(uint16_t port, const std::string& ca_pem = "") : socket_(io_) {
    ok_ = run([&](auto done) { socket_.async_connect({net::ip::make_address("127.0.0.1"), port}, done); });
    if (!ok_ || ca_pem.empty()) return;
    context_.emplace(ssl::context::tls_client);
    context_->add_certificate_authority(net::buffer(ca_pem));
    context_->set_verify_mode(ssl::verify_peer);
    tls_.emplace(socket_, *context_);
    tls_->set_verify_callback(ssl::host_name_verification("localhost"));
    SSL_set_tlsext_host_name(tls_->native_handle(), "localhost");
    ok_ = run([&](auto done) { tls_->async_handshake(ssl::stream_base::client, done); });
  }

  bool connected() const { return ok_; }

  Reply post(const std::string& target, const std::string& body, const std::vector<std::pair<std::string, std::string>>& headers) {
    bhttp::request<bhttp::string_body> request{bhttp::verb::post, target, 11};
    request.set(bhttp::field::host, "localhost");
    request.set(bhttp::field::content_type, "application/json");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    request.prepare_payload();
    Reply reply;
    if (!ok_) return reply;
    ok_ = with_stream([&](auto& stream) { return run([&](auto done) { bhttp::async_write(stream, request, done); }); });
    if (!ok_) return reply;
    bhttp::response<bhttp::string_body> response;
    ok_ = with_stream([&](auto& stream) {
      return run([&](auto done) { bhttp::async_read(stream, buffer_, response, done); });
    });
    if (!ok_) return reply;
    reply.status = response.result_int();
    reply.retry_after = std::string(response[bhttp::field::retry_after]);
    reply.body = response.body();
    return reply;
  }

  // Sends `bytes` as they are (plain TCP only) and reads one response.
  Reply raw(const std::string& bytes) {
    Reply reply;
    if (!ok_ || tls_) return reply;
    ok_ = run([&](auto done) { net::async_write(socket_, net::buffer(bytes), done); });
    bhttp::response<bhttp::string_body> response;
    if (ok_) ok_ = run([&](auto done) { bhttp::async_read(socket_, buffer_, response, done); });
    if (ok_) reply.status = response.result_int();
    return reply;
  }

  // A signed delivery, as the forwarder sends it.
  Reply deliver(const std::string& id, const std::string& body, const std::string& secret = kSecret,
                const std::string& target = "/hooks") {
    const std::string timestamp = hh::test::now_seconds();
    // No Boost.Test macros here: clients also run on threads of their own, and Boost.Test is
    // not thread-safe.
    auto signature = hh::signature::sign(secret, id, timestamp, body);
    if (!signature) return Reply{.status = 0, .retry_after = "", .body = signature.error()};
    return post(target, body, {{"webhook-id", id}, {"webhook-timestamp", timestamp}, {"webhook-signature", *signature}});
  }

 private:
  template <typename Start>
  bool run(Start start) {
    std::optional<error_code> result;
    start([&](error_code ec, auto&&...) { result = ec; });
    io_.restart();
    io_.run_for(5s);
    if (!result) {
      error_code ignored;
      socket_.close(ignored);
      io_.restart();
      io_.run();
      return false;
    }
    return !*result;
  }

  template <typename F>
  bool with_stream(F f) {
    if (tls_) return f(*tls_);
    return f(socket_);
  }

  net::io_context io_;
  tcp::socket socket_;
  std::optional<ssl::context> context_;
  std::optional<ssl::stream<tcp::socket&>> tls_;
  boost::beast::flat_buffer buffer_;
  bool ok_ = false;
};

FakeBackend::Options options(bool tls = false) {
  FakeBackend::Options o;
  o.secret = kSecret;
  o.tls = tls;
  return o;
}

// Polls a counter the backend updates on its own threads.
template <typename F>
bool eventually(F condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_signed_post_is_answered_200_and_recorded) {
  FakeBackend backend(options());
  BOOST_TEST(backend.url() == "http://127.0.0.1:" + std::to_string(backend.port()) + "/hooks");
  BOOST_TEST(backend.ca_pem().empty());
  Client client(backend.port());
  BOOST_REQUIRE(client.connected());

  const Reply reply = client.deliver("msg_1", R"({"n":1})");
  BOOST_TEST(reply.status == 200u);
  BOOST_TEST(backend.wait_for_unique(1, 0ms));
  const auto accepted = backend.accepted();
  BOOST_REQUIRE_EQUAL(accepted.size(), 1u);
  BOOST_TEST(accepted[0].id == "msg_1");
  BOOST_TEST(accepted[0].body == R"({"n":1})");
  BOOST_TEST(accepted[0].attempt == 0u);
  BOOST_TEST(!accepted[0].duplicate);
  BOOST_TEST(accepted[0].headers.at("content-type") == "application/json");
  BOOST_TEST(accepted[0].headers.at("webhook-id") == "msg_1");
  BOOST_TEST(backend.accepted_ids() == std::set<std::string>{"msg_1"});
  BOOST_TEST(backend.requests() == 1u);
  BOOST_TEST(backend.bad_signatures() == 0u);

  // Keep-alive: the next ones come on the same connection.
  BOOST_TEST(client.deliver("msg_2", "{}").status == 200u);
  BOOST_TEST(client.deliver("msg_3", "{}").status == 200u);
  BOOST_TEST(backend.unique_accepted() == 3u);
  BOOST_TEST(backend.connections() == 1u);
  BOOST_TEST(backend.accepted()[2].connection == 1u);
  BOOST_TEST(!backend.wait_for_unique(4, 20ms));
  // Waiting while they come: reached at once, or given up once none came for the stall.
  BOOST_TEST(backend.wait_for_unique_while_coming(3, 20ms, 1s));
  BOOST_TEST(!backend.wait_for_unique_while_coming(4, 20ms, 60s));
}

BOOST_AUTO_TEST_CASE(a_wrong_or_missing_signature_gets_401_and_is_not_recorded) {
  FakeBackend backend(options());
  Client client(backend.port());
  BOOST_TEST(client.deliver("msg_1", "{}", kOtherSecret).status == 401u);
  BOOST_TEST(client.post("/hooks", "{}", {}).status == 401u);
  BOOST_TEST(backend.bad_signatures() == 2u);
  BOOST_TEST(backend.accepted().empty());
  // The connection stays usable, and the id was not taken by the rejected attempts.
  BOOST_TEST(client.deliver("msg_1", "{}").status == 200u);
  BOOST_TEST(backend.accepted()[0].attempt == 0u);
  BOOST_TEST(client.deliver("msg_2", "{}", kSecret, "/elsewhere").status == 404u);
  BOOST_TEST(backend.requests() == 4u);
  BOOST_TEST(backend.unique_accepted() == 1u);
}

BOOST_AUTO_TEST_CASE(a_body_over_16_mib_gets_413) {
  FakeBackend backend(options());
  Client client(backend.port());
  // Only the head: the backend answers from Content-Length alone, before any body.
  const Reply reply = client.raw("POST /hooks HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                                 std::to_string(16 * 1024 * 1024 + 1) + "\r\n\r\n");
  BOOST_TEST(reply.status == 413u);
  BOOST_TEST(backend.requests() == 1u);
}

BOOST_AUTO_TEST_CASE(a_plan_can_fail_the_first_attempt) {
  FakeBackend backend(options());
  backend.set_plan([](const FakeBackend::Request& request) {
    FakeBackend::Fault fault;
    if (request.attempt == 0) fault.status = 500;
    return fault;
  });
  Client client(backend.port());
  BOOST_TEST(client.deliver("msg_1", "{}").status == 500u);
  BOOST_TEST(backend.unique_accepted() == 0u);
  BOOST_TEST(client.deliver("msg_1", "{}").status == 200u);
  const auto accepted = backend.accepted();
  BOOST_REQUIRE_EQUAL(accepted.size(), 1u);
  BOOST_TEST(accepted[0].attempt == 1u);
  BOOST_TEST(backend.duplicates() == 0u);
  BOOST_TEST(backend.requests() == 2u);
}

BOOST_AUTO_TEST_CASE(retry_after_is_sent_when_the_plan_asks) {
  FakeBackend backend(options());
  backend.set_plan([](const FakeBackend::Request&) {
    FakeBackend::Fault fault;
    fault.status = 503;
    fault.retry_after = "7";
    return fault;
  });
  Client client(backend.port());
  const Reply reply = client.deliver("msg_1", "{}");
  BOOST_TEST(reply.status == 503u);
  BOOST_TEST(reply.retry_after == "7");
  backend.set_plan([](const FakeBackend::Request&) -> FakeBackend::Fault { throw std::runtime_error("plan bug"); });
  BOOST_TEST(client.deliver("msg_1", "{}").status == 500u);
  backend.set_plan({});  // back to the default
  const Reply ok = client.deliver("msg_1", "{}");
  BOOST_TEST(ok.status == 200u);
  BOOST_TEST(ok.retry_after.empty());
}

BOOST_AUTO_TEST_CASE(drop_closes_the_connection_without_an_answer) {
  FakeBackend backend(options());
  backend.set_plan([](const FakeBackend::Request& request) {
    FakeBackend::Fault fault;
    fault.drop = request.attempt == 0;
    return fault;
  });
  Client client(backend.port());
  BOOST_TEST(client.deliver("msg_1", "{}").status == 0u);
  BOOST_TEST(backend.accepted().empty());
  BOOST_TEST(backend.requests() == 1u);
  Client again(backend.port());
  BOOST_TEST(again.deliver("msg_1", "{}").status == 200u);
  BOOST_TEST(backend.connections() == 2u);
}

BOOST_AUTO_TEST_CASE(a_second_2xx_for_an_id_counts_as_a_duplicate) {
  FakeBackend backend(options());
  Client client(backend.port());
  BOOST_TEST(client.deliver("msg_1", "{}").status == 200u);
  BOOST_TEST(client.deliver("msg_1", "{}").status == 200u);
  BOOST_TEST(client.deliver("msg_2", "{}").status == 200u);
  BOOST_TEST(backend.duplicates() == 1u);
  BOOST_TEST(backend.unique_accepted() == 2u);
  const auto accepted = backend.accepted();
  BOOST_REQUIRE_EQUAL(accepted.size(), 3u);
  BOOST_TEST(!accepted[0].duplicate);
  BOOST_TEST(accepted[1].duplicate);
  BOOST_TEST(accepted[1].attempt == 1u);
  BOOST_TEST(!accepted[2].duplicate);
}

BOOST_AUTO_TEST_CASE(tls_with_the_ca_and_host_name_verification) {
  FakeBackend backend(options(true));
  BOOST_TEST(backend.url() == "https://localhost:" + std::to_string(backend.port()) + "/hooks");
  BOOST_REQUIRE(!backend.ca_pem().empty());
  Client client(backend.port(), backend.ca_pem());
  BOOST_REQUIRE(client.connected());
  BOOST_TEST(client.deliver("msg_1", "{}").status == 200u);
  BOOST_TEST(client.deliver("msg_2", "{}").status == 200u);
  BOOST_TEST(client.deliver("msg_3", "{}", kOtherSecret).status == 401u);
  BOOST_TEST(backend.unique_accepted() == 2u);
  BOOST_TEST(backend.connections() == 1u);

  // Another CA's client refuses the certificate.
  FakeBackend other(options(true));
  Client untrusting(backend.port(), other.ca_pem());
  BOOST_TEST(!untrusting.connected());
}

BOOST_AUTO_TEST_CASE(eight_connections_are_served_at_the_same_time) {
  FakeBackend backend(options());
  // Each request waits in the plan until all eight are there: only a server that handles
  // them side by side lets them through.
  std::mutex mutex;
  std::condition_variable arrived;
  size_t waiting = 0;
  backend.set_plan([&](const FakeBackend::Request&) {
    std::unique_lock lock(mutex);
    ++waiting;
    arrived.notify_all();
    arrived.wait_for(lock, 5s, [&] { return waiting >= 8; });
    return FakeBackend::Fault{};
  });
  std::vector<unsigned> statuses(8);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < statuses.size(); ++i) {
    clients.emplace_back([&, i] {
      Client client(backend.port());
      statuses[i] = client.deliver("msg_" + std::to_string(i), "{}").status;
    });
  }
  for (auto& thread : clients) thread.join();
  for (unsigned status : statuses) BOOST_TEST(status == 200u);
  BOOST_TEST(backend.max_in_flight() == 8u);
  BOOST_TEST(backend.wait_for_unique(8, 1s));
}

BOOST_AUTO_TEST_CASE(stop_cuts_a_delay_short_and_the_port_can_be_reused) {
  auto backend = std::make_unique<FakeBackend>(options());
  const uint16_t port = backend->port();
  backend->set_plan([](const FakeBackend::Request&) {
    FakeBackend::Fault fault;
    fault.delay = 60s;
    return fault;
  });
  unsigned status = 999;
  std::thread waiting([&] {
    Client client(port);
    status = client.deliver("msg_1", "{}").status;
  });
  Client idle(port);  // a keep-alive connection with no request: stop() must close it too
  BOOST_REQUIRE(idle.connected());
  BOOST_REQUIRE(eventually([&] { return backend->requests() == 1; }));
  const auto start = std::chrono::steady_clock::now();
  backend->stop();
  const bool quick = std::chrono::steady_clock::now() - start < 2s;
  BOOST_TEST(quick);
  waiting.join();
  BOOST_TEST(status == 0u);
  BOOST_TEST(backend->accepted().empty());
  BOOST_TEST(!Client(port).connected());  // refused

  backend.reset();
  FakeBackend::Options same = options();
  same.port = port;
  FakeBackend restarted(same);
  BOOST_TEST(restarted.port() == port);
  BOOST_TEST(Client(port).deliver("msg_1", "{}").status == 200u);
}

BOOST_AUTO_TEST_SUITE_END()  // fake_backend_test
