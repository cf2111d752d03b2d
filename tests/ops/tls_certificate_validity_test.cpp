// The listener's certificate outside its validity period, or close to its end, against the
// real binary (spec §8). Such a certificate loads: `check-config` said ok and `serve`
// started with an info line while every client failed the handshake (black-box finding).
// Now check-config refuses an expired or not yet valid one and warns about one that ends
// within 14 days; serve warns at start and at each reload and serves all the same; the
// notAfter is a gauge. Certificates are made by the test (test_certificate.h).
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/test/unit_test.hpp>

#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/ops/prometheus_parser.h"
#include "tests/ops/test_certificate.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(tls_certificate_validity_test)

using namespace hh::test;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

constexpr long kDay = 86400;
constexpr auto kWait = std::chrono::seconds(20);
const std::string kMetric = "healthhook_tls_certificate_expiry_timestamp_seconds";

struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};

std::unique_ptr<X509, X509Free> parse_certificate(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  BOOST_REQUIRE(cert);
  return cert;
}

// The certificate's notAfter (or notBefore) as OpenSSL prints it ("Jun  1 12:00:00 2026 GMT").
std::string time_text(const std::string& pem, bool not_after = true) {
  const auto cert = parse_certificate(pem);
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  const ASN1_TIME* time = not_after ? X509_get0_notAfter(cert.get()) : X509_get0_notBefore(cert.get());
  BOOST_REQUIRE(ASN1_TIME_print(out.get(), time) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

std::string not_after_text(const std::string& pem) { return time_text(pem); }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// docs/troubleshooting.md quotes check-config's line as printed, after "healthhook
// check-config: ", with the file, the dates and the days written as words.
void check_quoted(const std::string& printed, const std::vector<std::pair<std::string, std::string>>& words) {
  const std::string prefix = "healthhook check-config: ";
  BOOST_REQUIRE(printed.starts_with(prefix) && printed.ends_with("\n"));
  std::string quote = printed.substr(prefix.size(), printed.size() - prefix.size() - 1);
  for (const auto& [from, to] : words) quote = replace_all(quote, from, to);
  std::ifstream in(std::filesystem::path(HEALTHHOOK_SOURCE_DIR) / "docs" / "troubleshooting.md");
  const std::string document((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(document.find("`" + quote + "`") != std::string::npos,
             "docs/troubleshooting.md does not quote `" << quote << "`");
}

// The certificate's notAfter in Unix seconds, as its distance from the epoch.
double not_after_unix(const std::string& pem) {
  const auto cert = parse_certificate(pem);
  std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> epoch(ASN1_TIME_set(nullptr, 0), ASN1_TIME_free);
  int days = 0, seconds = 0;
  BOOST_REQUIRE(ASN1_TIME_diff(&days, &seconds, epoch.get(), X509_get0_notAfter(cert.get())) == 1);
  return static_cast<double>(days) * kDay + seconds;
}

// `healthhook check-config` on a configuration with the given certificate. The listen port
// is bound and closed again.
ProcessResult check_config(const TempDir& dir, const TestCertificate& certificate) {
  install_listener_certificate(dir, certificate);
  dir.write("secret", random_secret() + "\n");
  const std::string config = dir.write("healthhook.toml", "listen = \"" + unserved_listen_address(29020) + "\"\ndatabase = \"" +
                                                              dir.file("healthhook.db") +
                                                              "\"\nsigning_secret_files = [\"secret\"]\n" + kListenerTlsToml);
  return run_healthhook({"check-config", "--config", config});
}

// GET `target` over TLS, trusting any certificate (an expired one included): what the
// server serves, not what a client would accept. Status 0 when the exchange failed.
int get_over_tls(unsigned short port, const std::string& target, std::string& body) {
  net::io_context io;
  ssl::context context(ssl::context::tls_client);
  context.set_verify_mode(ssl::verify_none);
  beast::ssl_stream<beast::tcp_stream> stream(io, context);
  beast::get_lowest_layer(stream).expires_after(kWait);
  beast::error_code ec;
  beast::get_lowest_layer(stream).connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (!ec) stream.handshake(ssl::stream_base::client, ec);
  if (ec) return 0;
  bhttp::request<bhttp::string_body> request{bhttp::verb::get, target, 11};
  request.set(bhttp::field::host, "127.0.0.1");
  request.set(bhttp::field::connection, "close");
  bhttp::write(stream, request, ec);
  if (ec) return 0;
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> response;
  bhttp::read(stream, buffer, response, ec);
  if (ec) return 0;
  body = response.body();
  beast::get_lowest_layer(stream).socket().close(ec);
  return static_cast<int>(response.result_int());
}

// The gauge's value scraped over TLS.
double expiry_gauge(const ServerProcess& server) {
  std::string body;
  BOOST_REQUIRE_EQUAL(get_over_tls(server.port(), "/metrics", body), 200);
  const auto value = PromExposition::parse(body).value(kMetric);
  BOOST_REQUIRE_MESSAGE(value.has_value(), "no " << kMetric << " in\n" << body);
  return *value;
}

size_t lines_containing(const ServerProcess& server, const std::string& needle) {
  size_t n = 0;
  for (const auto& line : server.log_lines()) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(check_config_refuses_an_expired_certificate_naming_the_file_and_its_not_after) {
  TempDir dir;
  const auto expired = make_self_signed("healthhook-test-1", 1, {.not_before_s = -30 * kDay, .not_after_s = -kDay});
  const auto result = check_config(dir, expired);
  BOOST_TEST(result.exit_code == 2, result.stderr_text);
  BOOST_TEST(result.stderr_text == "healthhook check-config: tls.cert_file: " + dir.file("cert.pem") +
                                       ": the certificate expired on " + not_after_text(expired.cert_pem) +
                                       " (notAfter): every client's TLS handshake fails; renew it\n");
  BOOST_TEST(result.stdout_text.empty(), result.stdout_text);
  check_quoted(result.stderr_text, {{dir.file("cert.pem"), "PATH"}, {not_after_text(expired.cert_pem), "DATE"}});
}

BOOST_AUTO_TEST_CASE(check_config_refuses_a_certificate_not_yet_valid) {
  TempDir dir;
  const auto early = make_self_signed("healthhook-test-1", 1, {.not_before_s = kDay, .not_after_s = 90 * kDay});
  const auto result = check_config(dir, early);
  BOOST_TEST(result.exit_code == 2, result.stderr_text);
  BOOST_TEST(result.stderr_text.starts_with("healthhook check-config: tls.cert_file: " + dir.file("cert.pem") +
                                            ": the certificate is not valid before "),
             result.stderr_text);
  BOOST_TEST(result.stderr_text.find("notAfter " + not_after_text(early.cert_pem) + ")") != std::string::npos,
             result.stderr_text);
  check_quoted(result.stderr_text, {{dir.file("cert.pem"), "PATH"},
                                    {not_after_text(early.cert_pem), "DATE"},
                                    {time_text(early.cert_pem, false), "DATE"}});
}

BOOST_AUTO_TEST_CASE(check_config_warns_about_a_certificate_that_expires_within_14_days) {
  TempDir dir;
  // Three days and an hour: "in 3 days" however long the test takes to get there.
  const auto ending = make_self_signed("healthhook-test-1", 1, {.not_before_s = -kDay, .not_after_s = 3 * kDay + 3600});
  const auto result = check_config(dir, ending);
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stderr_text == "healthhook check-config: warning: tls.cert_file: " + dir.file("cert.pem") +
                                       ": the certificate expires on " + not_after_text(ending.cert_pem) +
                                       " (notAfter), in 3 days: renew it, then reload\n");
  BOOST_TEST(result.stdout_text.find(R"("status":"ok")") != std::string::npos, result.stdout_text);
  check_quoted(result.stderr_text,
               {{dir.file("cert.pem"), "PATH"}, {not_after_text(ending.cert_pem), "DATE"}, {"in 3 days", "in N days"}});

  // Fifteen days left: nothing said.
  const auto fine = make_self_signed("healthhook-test-1", 1, {.not_before_s = -kDay, .not_after_s = 15 * kDay});
  const auto quiet = check_config(dir, fine);
  BOOST_TEST(quiet.exit_code == 0, quiet.stderr_text);
  BOOST_TEST(quiet.stderr_text.empty(), quiet.stderr_text);
}

// Served all the same (a renewal and a reload mend it without a restart), with a warning
// naming the file and the date, and the gauge saying when it ended.
BOOST_AUTO_TEST_CASE(serve_warns_about_an_expired_certificate_at_start_and_still_serves) {
  TempDir dir;
  const auto expired = make_self_signed("healthhook-test-1", 1, {.not_before_s = -30 * kDay, .not_after_s = -kDay});
  install_listener_certificate(dir, expired);
  ServerProcess server(dir, kListenerTlsToml);
  BOOST_TEST(lines_containing(server, R"({"level":"warn","event":"tls_certificate_expired","file":")" +
                                          dir.file("cert.pem") + R"(",)") == 1u);
  BOOST_TEST(lines_containing(server, R"("not_after":")" + not_after_text(expired.cert_pem) + "\"") >= 1u);
  std::string body;
  BOOST_TEST(get_over_tls(server.port(), "/healthz", body) == 200);
  BOOST_TEST(expiry_gauge(server) == not_after_unix(expired.cert_pem));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_reload_warns_about_the_new_certificate_and_updates_the_gauge) {
  TempDir dir;
  const auto fine = make_self_signed("healthhook-test-1", 1, {.not_before_s = -kDay, .not_after_s = 90 * kDay});
  install_listener_certificate(dir, fine);
  ServerProcess server(dir, kListenerTlsToml);
  BOOST_TEST(lines_containing(server, "tls_certificate_") == 0u);
  BOOST_TEST(expiry_gauge(server) == not_after_unix(fine.cert_pem));

  const auto ending = make_self_signed("healthhook-test-2", 2, {.not_before_s = -kDay, .not_after_s = 5 * kDay});
  install_listener_certificate(dir, ending);
  server.signal(SIGHUP);
  BOOST_REQUIRE(server.wait_for_log(R"({"level":"warn","event":"tls_certificate_expires_soon","file":")", kWait));
  BOOST_TEST(expiry_gauge(server) == not_after_unix(ending.cert_pem));

  const auto expired = make_self_signed("healthhook-test-3", 3, {.not_before_s = -30 * kDay, .not_after_s = -kDay});
  install_listener_certificate(dir, expired);
  server.signal(SIGHUP);
  BOOST_REQUIRE(server.wait_for_log(R"({"level":"warn","event":"tls_certificate_expired","file":")", kWait));
  BOOST_TEST(expiry_gauge(server) == not_after_unix(expired.cert_pem));
  BOOST_TEST(server.stop() == 0);
}

// The chain file's intermediate, sent with the leaf, expired: clients refuse the handshake
// as for an expired leaf (black-box finding: only the leaf was judged). check-config names
// the intermediate; serve warns and the gauge is the intermediate's notAfter.
BOOST_AUTO_TEST_CASE(an_expired_intermediate_in_the_chain_is_judged_and_named) {
  TempDir dir;
  const auto root = make_self_signed("healthhook-test-root", 1, {.not_before_s = -400 * kDay, .not_after_s = 400 * kDay});
  const auto intermediate =
      make_signed("healthhook-test-intermediate", 2, {.not_before_s = -300 * kDay, .not_after_s = -kDay}, &root);
  const auto leaf = make_signed("healthhook-test-leaf", 3, {.not_before_s = -kDay, .not_after_s = 300 * kDay}, &intermediate);
  const TestCertificate chain{leaf.cert_pem + intermediate.cert_pem, leaf.key_pem};

  const auto result = check_config(dir, chain);
  BOOST_TEST(result.exit_code == 2, result.stderr_text);
  BOOST_TEST(result.stderr_text == "healthhook check-config: tls.cert_file: " + dir.file("cert.pem") +
                                       ": the chain certificate CN=healthhook-test-intermediate expired on " +
                                       not_after_text(intermediate.cert_pem) +
                                       " (notAfter): every client's TLS handshake fails; renew it\n");

  ServerProcess server(dir, kListenerTlsToml);
  BOOST_TEST(lines_containing(server, R"({"level":"warn","event":"tls_certificate_expired","file":")" +
                                          dir.file("cert.pem") + R"(",)") == 1u);
  BOOST_TEST(lines_containing(server, "the chain certificate CN=healthhook-test-intermediate expired on") >= 1u);
  BOOST_TEST(expiry_gauge(server) == not_after_unix(intermediate.cert_pem));
  BOOST_TEST(server.stop() == 0);
}

// An intermediate ending within 14 days, the leaf valid for long: warned about by name.
BOOST_AUTO_TEST_CASE(an_intermediate_ending_soon_is_warned_about_by_name) {
  TempDir dir;
  const auto root = make_self_signed("healthhook-test-root", 1, {.not_before_s = -400 * kDay, .not_after_s = 400 * kDay});
  const auto intermediate =
      make_signed("healthhook-test-intermediate", 2, {.not_before_s = -300 * kDay, .not_after_s = 3 * kDay + 3600}, &root);
  const auto leaf = make_signed("healthhook-test-leaf", 3, {.not_before_s = -kDay, .not_after_s = 300 * kDay}, &intermediate);
  const auto result = check_config(dir, {leaf.cert_pem + intermediate.cert_pem, leaf.key_pem});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stderr_text == "healthhook check-config: warning: tls.cert_file: " + dir.file("cert.pem") +
                                       ": the chain certificate CN=healthhook-test-intermediate expires on " +
                                       not_after_text(intermediate.cert_pem) + " (notAfter), in 3 days: renew it, then reload\n");
}

BOOST_AUTO_TEST_CASE(without_tls_there_is_no_expiry_gauge) {
  TempDir dir;
  ServerProcess server(dir);
  const auto response = HttpClient(server.port()).get("/metrics");
  BOOST_REQUIRE_EQUAL(response.status, 200);
  BOOST_TEST(!PromExposition::parse(response.body).has(kMetric));
  BOOST_TEST(server.stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()  // tls_certificate_validity_test
