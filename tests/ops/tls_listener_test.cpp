// TLS on the listener, against the real binary: certificates generated at test time, a
// client that trusts exactly the certificate it expects, and SIGHUP swapping the
// certificate for new connections while open ones keep theirs.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <openssl/bn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "receiver/signature/webhook_signature.h"
#include "tests/ops/test_certificate.h"
#include "tests/support/database_probe.h"
#include "tests/support/http_client.h"
#include "tests/support/raw_connection.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(tls_listener_test)

using namespace hh::test;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

constexpr auto kWait = std::chrono::seconds(20);

struct PeerCertificate {
  std::string common_name;
  std::string serial;  // hex, as BN_bn2hex writes it
};

// One TLS connection to 127.0.0.1 that trusts only `trusted_pem`.
class TlsConnection {
 public:
  TlsConnection(unsigned short port, const std::string& trusted_pem, std::optional<int> max_version = std::nullopt)
      : context_(ssl::context::tls_client) {
    context_.set_verify_mode(ssl::verify_peer);
    context_.add_certificate_authority(net::buffer(trusted_pem));
    if (max_version) {
      // Old protocol versions are also refused by OpenSSL's default security level on the
      // client side: lower it so that only the server can be what refuses.
      SSL_CTX_set_security_level(context_.native_handle(), 0);
      SSL_CTX_set_cipher_list(context_.native_handle(), "DEFAULT:@SECLEVEL=0");
      SSL_CTX_set_min_proto_version(context_.native_handle(), TLS1_VERSION);
      SSL_CTX_set_max_proto_version(context_.native_handle(), *max_version);
    }
    stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io_, context_);
    auto& tcp = beast::get_lowest_layer(*stream_);
    tcp.expires_after(kWait);
    tcp.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), error_);
    if (!error_) stream_->handshake(ssl::stream_base::client, error_);
  }

  const beast::error_code& error() const { return error_; }

  // Hangs up (TCP close). Done before stopping the server: a session the server ends
  // waits up to its write timeout for the client's close_notify, which an idle client
  // never sends.
  void close() {
    beast::error_code ignored;
    beast::get_lowest_layer(*stream_).socket().close(ignored);
  }

  PeerCertificate peer() const {
    PeerCertificate out;
    X509* cert = SSL_get1_peer_certificate(stream_->native_handle());
    if (!cert) return out;
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    out.common_name = cn;
    BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
    char* hex = BN_bn2hex(serial);
    out.serial = hex;
    OPENSSL_free(hex);
    BN_free(serial);
    X509_free(cert);
    return out;
  }

  // GET on this connection (keep-alive); 0 when the exchange failed.
  int get(const std::string& target, std::string* body = nullptr) {
    bhttp::request<bhttp::string_body> request{bhttp::verb::get, target, 11};
    return exchange(request, body);
  }

  // `request` on this connection (keep-alive), Host and Content-Length set here; 0 when
  // the exchange failed.
  int exchange(bhttp::request<bhttp::string_body>& request, std::string* body = nullptr) {
    request.set(bhttp::field::host, "127.0.0.1");
    request.prepare_payload();
    beast::get_lowest_layer(*stream_).expires_after(kWait);
    beast::error_code ec;
    bhttp::write(*stream_, request, ec);
    if (ec) return 0;
    bhttp::response<bhttp::string_body> response;
    bhttp::read(*stream_, buffer_, response, ec);
    if (ec) return 0;
    if (body) *body = response.body();
    return static_cast<int>(response.result_int());
  }

 private:
  net::io_context io_;
  ssl::context context_;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream_;
  beast::flat_buffer buffer_;
  beast::error_code error_;
};

size_t count_logs(const ServerProcess& server, const std::string& needle) {
  const auto lines = server.log_lines();
  return static_cast<size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
}

// Waits until `needle` was logged `n` times.
bool wait_for_logs(const ServerProcess& server, const std::string& needle, size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (count_logs(server, needle) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A POST /webhooks of `body` signed with `secret` now.
bhttp::request<bhttp::string_body> signed_delivery(const std::string& secret, const std::string& id,
                                                   const std::string& body) {
  const std::string timestamp = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  const auto signature = hh::signature::sign(secret, id, timestamp, body);
  BOOST_REQUIRE(signature.ok());
  bhttp::request<bhttp::string_body> delivery{bhttp::verb::post, "/webhooks", 11};
  delivery.set(bhttp::field::content_type, "application/json");
  delivery.set("svix-id", id);
  delivery.set("svix-timestamp", timestamp);
  delivery.set("svix-signature", signature.value());
  delivery.body() = body;
  return delivery;
}

// `healthhook serve` with the given [tls] files in `dir`; returns what it printed and its
// exit code (it is expected to refuse to start).
ProcessResult serve_expecting_failure(const TempDir& dir) {
  dir.write("secret", random_secret() + "\n");
  const std::string config = dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\ndatabase = \"" +
                                                              dir.file("healthhook.db") +
                                                              "\"\nsigning_secret_files = [\"secret\"]\n" + kListenerTlsToml);
  return run_healthhook({"serve", "--config", config}, "", {}, std::chrono::seconds(60));
}

}  // namespace

BOOST_AUTO_TEST_CASE(serves_https_with_the_configured_certificate_and_swaps_it_on_sighup) {
  TempDir dir;
  const auto first = make_self_signed("healthhook-test-1", 1);
  const auto second = make_self_signed("healthhook-test-2", 2);
  install_listener_certificate(dir, first);
  ServerProcess server(dir, kListenerTlsToml);
  BOOST_TEST(count_logs(server, R"("event":"tls","subject":"CN=healthhook-test-1","serial":"01")") == 1u);

  TlsConnection before(server.port(), first.cert_pem);
  BOOST_REQUIRE_MESSAGE(!before.error(), before.error().message());
  BOOST_TEST(before.peer().common_name == "healthhook-test-1");
  BOOST_TEST(before.peer().serial == "01");
  std::string body;
  BOOST_TEST(before.get("/healthz", &body) == 200);
  BOOST_TEST(body.find("alive") != std::string::npos);

  // Plain HTTP on the TLS port is told so (plain_http_to_the_tls_port_is_told_to_use_tls).
  HttpClient plain(server.port(), std::chrono::seconds(5));
  BOOST_TEST(plain.get("/healthz").status == 400);

  install_listener_certificate(dir, second);
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"tls_reloaded","subject":"CN=healthhook-test-2","serial":"02")", 1));

  TlsConnection after(server.port(), second.cert_pem);
  BOOST_REQUIRE_MESSAGE(!after.error(), after.error().message());
  BOOST_TEST(after.peer().common_name == "healthhook-test-2");
  BOOST_TEST(after.peer().serial == "02");
  BOOST_TEST(after.get("/healthz") == 200);
  // A client that still trusts only the old certificate is refused by its own check now.
  TlsConnection stale(server.port(), first.cert_pem);
  BOOST_TEST(static_cast<bool>(stale.error()));
  // The connection opened before the reload keeps its session.
  BOOST_TEST(before.get("/healthz") == 200);

  // A reload with a broken certificate changes nothing.
  dir.write("cert.pem", "not a certificate\n");
  server.signal(SIGHUP);
  BOOST_REQUIRE(wait_for_logs(server, R"("event":"reload_failed","reason":"tls.cert_file: )", 1));
  TlsConnection kept(server.port(), second.cert_pem);
  BOOST_REQUIRE_MESSAGE(!kept.error(), kept.error().message());
  BOOST_TEST(kept.peer().serial == "02");

  for (auto* connection : {&before, &after, &stale, &kept}) connection->close();
  plain.close();
  BOOST_TEST(server.stop() == 0);
}

// Answers larger than a TLS record (16 KiB) arrive whole, and the connection goes on to its
// next answer: a read-API page of a delivery of 40 KB, then /healthz on the same connection.
BOOST_AUTO_TEST_CASE(an_answer_larger_than_a_tls_record_arrives_whole) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  const std::string token = random_secret();
  dir.write("token", token + "\n");
  ServerProcess server(dir, kListenerTlsToml + "[read_api]\ntoken_file = \"token\"\n");
  TlsConnection client(server.port(), certificate.cert_pem);
  BOOST_REQUIRE_MESSAGE(!client.error(), client.error().message());

  const std::string note(40000, 'n');
  const std::string body = R"({"event_type":"daily.data.sleep.created","user_id":"u1","data":{"id":"s1","user_id":"u1",)"
                           R"("calendar_date":"2024-05-16","note":")" + note + R"("}})";
  auto delivery = signed_delivery(server.secret(), "msg_large", body);
  BOOST_TEST(client.exchange(delivery) == 200);

  bhttp::request<bhttp::string_body> page{bhttp::verb::get, "/v1/deliveries/msg_large", 11};
  page.set(bhttp::field::authorization, "Bearer " + token);
  std::string answer;
  BOOST_TEST(client.exchange(page, &answer) == 200);
  BOOST_TEST(answer.size() > 40000u);
  BOOST_TEST(answer.find(note) != std::string::npos);
  std::string health;
  BOOST_TEST(client.get("/healthz", &health) == 200);
  BOOST_TEST(health.find("alive") != std::string::npos);
  client.close();
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(protocol_versions_below_tls_1_2_are_refused) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  ServerProcess server(dir, kListenerTlsToml);
  TlsConnection tls11(server.port(), certificate.cert_pem, TLS1_1_VERSION);
  BOOST_TEST(static_cast<bool>(tls11.error()));
  // The same client allowed TLS 1.2 connects: the refusal above was the version's.
  TlsConnection tls12(server.port(), certificate.cert_pem, TLS1_2_VERSION);
  BOOST_TEST(!tls12.error(), tls12.error().message());
  tls11.close();
  tls12.close();
  BOOST_TEST(server.stop() == 0);
}

// A handshake left half-way is closed at header_timeout_s and counted as a slow client,
// as a head left half-way is (facing-the-internet.md): a listener over TLS shows it too.
BOOST_AUTO_TEST_CASE(a_handshake_left_half_way_is_counted_as_a_client_timeout) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  ServerProcess server(dir, "header_timeout_s = 1\nrefusal_log_interval_s = 1\n" + kListenerTlsToml);
  RawConnection silent(server.port());
  // The first bytes of a ClientHello record, then nothing.
  BOOST_TEST(silent.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  BOOST_TEST(silent.closed_by_server(std::chrono::seconds(5)));
  BOOST_TEST(server.wait_for_log("\"client_timeout\":1", std::chrono::seconds(5)));
  BOOST_TEST(server.stop() == 0);
}

// A black-box pass: a TLS client that connected and stalled in its handshake held SIGTERM
// for the whole drain (10 s, then "drain_deadline"), where a plain connection in the same
// state is closed at once. A connection in its handshake, or idle after it, has no
// request in flight: the stop closes it at once, and the delivery acknowledged before it
// is stored. (header_timeout_s is long, so that no deadline but the stop's ends them.)
BOOST_AUTO_TEST_CASE(sigterm_closes_connections_still_in_their_tls_handshake_at_once) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  ServerProcess server(dir, "header_timeout_s = 60\nidle_timeout_s = 60\n" + kListenerTlsToml);
  RawConnection silent(server.port());
  RawConnection half_hello(server.port());
  // The first bytes of a ClientHello record, then nothing.
  BOOST_TEST(half_hello.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  // Accepted after the two above: once it is answered, they are in their handshake. Left
  // open, it is idle between requests.
  TlsConnection client(server.port(), certificate.cert_pem);
  BOOST_REQUIRE_MESSAGE(!client.error(), client.error().message());
  const std::string body = R"({"event_type":"daily.data.sleep.created","user_id":"u1","data":{"id":"s1",)"
                           R"("user_id":"u1","calendar_date":"2024-05-16"}})";
  auto delivery = signed_delivery(server.secret(), "msg_before_stop", body);
  BOOST_TEST(client.exchange(delivery) == 200);

  BOOST_TEST(server.stop(std::chrono::seconds(60)) == 0);
  // No session was left for the drain's deadline to close.
  BOOST_TEST(count_logs(server, "\"drain_deadline\"") == 0u);
  BOOST_TEST(count_logs(server, "\"drain_stuck\"") == 0u);
  BOOST_TEST(query_int(server.database(), "SELECT count(*) FROM deliveries WHERE message_id = 'msg_before_stop'") ==
             1);
}

// A connection in its TLS handshake is idle, not in the middle of a request: when every
// slot is taken, the one idle the longest (past a second) makes room for a newcomer, as a
// plain connection that has sent nothing does (connection_table.h). It held already; kept
// here beside the stop's rule above, which it mirrors.
BOOST_AUTO_TEST_CASE(a_connection_in_its_tls_handshake_makes_room_when_all_are_taken) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  ServerProcess server(dir, "max_connections = 2\nheader_timeout_s = 60\nrefusal_log_interval_s = 1\n" + kListenerTlsToml);
  RawConnection silent(server.port());
  RawConnection half_hello(server.port());
  BOOST_TEST(half_hello.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past kMinIdleBeforeEviction
  TlsConnection client(server.port(), certificate.cert_pem);
  BOOST_REQUIRE_MESSAGE(!client.error(), client.error().message());
  BOOST_TEST(client.get("/healthz") == 200);
  BOOST_TEST(silent.closed_by_server(std::chrono::seconds(5)));  // idle the longest
  BOOST_TEST(server.wait_for_log("\"evicted_idle\":1", std::chrono::seconds(5)));
  client.close();
  BOOST_TEST(server.stop() == 0);
}

// Plain HTTP sent to the TLS port got the connection closed without a word. It is told
// what the port expects (as nginx's "400 The plain HTTP request was sent to HTTPS port"),
// the connection closes, and the refusal is counted as a bad request.
BOOST_AUTO_TEST_CASE(plain_http_to_the_tls_port_is_told_to_use_tls) {
  TempDir dir;
  const auto certificate = make_self_signed("healthhook-test-1", 1);
  install_listener_certificate(dir, certificate);
  ServerProcess server(dir, "refusal_log_interval_s = 1\n" + kListenerTlsToml);
  const RawReply reply =
      raw_exchange(server.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", std::chrono::seconds(5));
  BOOST_TEST(reply.starts_with("HTTP/1.1 400"), reply.received);
  BOOST_TEST(reply.received.find("\r\nConnection: close\r\n") != std::string::npos, reply.received);
  BOOST_TEST(reply.received.ends_with("\r\n\r\nthis port expects TLS (HTTPS)\n"), reply.received);
  BOOST_TEST(reply.closed_by_server);
  BOOST_TEST(server.wait_for_log("\"bad_request\":1", std::chrono::seconds(5)));
  // TLS clients are served as before.
  TlsConnection client(server.port(), certificate.cert_pem);
  BOOST_REQUIRE_MESSAGE(!client.error(), client.error().message());
  BOOST_TEST(client.get("/healthz") == 200);
  client.close();
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_key_that_does_not_match_the_certificate_stops_start_up) {
  TempDir dir;
  const auto first = make_self_signed("healthhook-test-1", 1);
  const auto second = make_self_signed("healthhook-test-2", 2);
  install_listener_certificate(dir, {first.cert_pem, second.key_pem});
  const auto result = serve_expecting_failure(dir);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("tls.key_file: " + dir.file("key.pem") + " does not match the certificate in " +
                                     dir.file("cert.pem")) != std::string::npos,
             result.stderr_text);
  BOOST_TEST(!std::filesystem::exists(dir.file("healthhook.db")));
}

BOOST_AUTO_TEST_CASE(an_unreadable_certificate_stops_start_up_naming_the_file) {
  TempDir dir;
  dir.write("key.pem", make_self_signed("healthhook-test-1", 1).key_pem);  // cert.pem is missing
  const auto result = serve_expecting_failure(dir);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.stderr_text.find("tls.cert_file: " + dir.file("cert.pem") +
                                     ": cannot read: No such file or directory") != std::string::npos,
             result.stderr_text);
  // Refused before the store is opened: nothing created (a new database was made and
  // migrated first).
  BOOST_TEST(!std::filesystem::exists(dir.file("healthhook.db")));
  BOOST_TEST(!std::filesystem::exists(dir.file("healthhook.db-processor.lock")));
}

BOOST_AUTO_TEST_SUITE_END()  // tls_listener_test
