// check-config prints the max_connections serve would run with: serve lowers it to fit the
// file-descriptor limit (spec §2: a warning, never a refusal to start), and check-config
// printed the configured value, quietly (black-box finding). Both now take it from
// app::fit_connections, and check-config prints the warning serve would log.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(check_config_limits_test)

using namespace hh::test;

namespace {

// A configuration in `dir` with max_connections = 5000; its path.
std::string write_config(const TempDir& dir) {
  dir.write("secret", random_secret() + "\n");
  return dir.write("healthhook.toml", "listen = \"" + unserved_listen_address(29021) + "\"\ndatabase = \"" + dir.file("healthhook.db") +
                                          "\"\nsigning_secret_files = [\"secret\"]\nmax_connections = 5000\n");
}

// check-config under RLIMIT_NOFILE `nofile`, soft and hard (as `prlimit --nofile=N:N` sets it).
ProcessResult check_config(const std::string& config, uint64_t nofile) {
  return run_healthhook({"check-config", "--config", config}, "", {}, std::chrono::seconds(120),
                        ProcessLimits{.max_open_files = nofile, .umask = std::nullopt});
}

}  // namespace

BOOST_AUTO_TEST_CASE(check_config_prints_max_connections_lowered_to_the_descriptor_limit_as_serve_does) {
  TempDir dir;
  const std::string config = write_config(dir);

  // 1064 descriptors: 1000 connections beside the 64 serve keeps (no outgoing sockets here).
  const auto lowered = check_config(config, 1064);
  BOOST_TEST(lowered.exit_code == 0, lowered.stderr_text);
  BOOST_TEST(lowered.stderr_text ==
                 "healthhook check-config: warning: max_connections: 5000 lowered to 1000 (file-descriptor limit "
                 "1064, outgoing_sockets 0): the file-descriptor limit is too low; raise LimitNOFILE (ulimit -n)\n",
             lowered.stderr_text);
  BOOST_TEST(lowered.stdout_text.find(R"("max_connections":1000,)") != std::string::npos, lowered.stdout_text);
  BOOST_TEST(lowered.stdout_text.find(R"("max_connections":5000)") == std::string::npos, lowered.stdout_text);
  // docs/troubleshooting.md quotes the warning with its figures as words.
  std::ifstream in(std::filesystem::path(HEALTHHOOK_SOURCE_DIR) / "docs" / "troubleshooting.md");
  const std::string document((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(document.find("`warning: max_connections: CONFIGURED lowered to N (file-descriptor limit LIMIT, "
                           "outgoing_sockets M): the file-descriptor limit is too low; raise LimitNOFILE (ulimit -n)`") !=
             std::string::npos);

  // 64 descriptors: as good as none, said as serve says it.
  const auto none = check_config(config, 64);
  BOOST_TEST(none.exit_code == 0, none.stderr_text);
  BOOST_TEST(none.stderr_text.find("warning: max_connections: 5000 lowered to 1 (file-descriptor limit 64, "
                                   "outgoing_sockets 0): ") != std::string::npos,
             none.stderr_text);
  BOOST_TEST(none.stderr_text.find("it may accept none; raise LimitNOFILE (ulimit -n) to 1024 or more") !=
                 std::string::npos,
             none.stderr_text);

  // serve under the same limit logs the same figures (and starts).
  ServerProcess server(dir, "max_connections = 5000\n", std::chrono::seconds(20), {},
                       ProcessLimits{.max_open_files = 1064, .umask = std::nullopt});
  BOOST_TEST(server.wait_for_log(R"("event":"max_connections_lowered","configured":5000,"max_connections":1000,)"
                                 R"("nofile_limit":1064,"outgoing_sockets":0,)",
                                 std::chrono::seconds(5)));
  BOOST_TEST(server.stop() == 0);

  // A limit with room: the configured value, nothing said.
  const auto roomy = check_config(config, 8192);
  BOOST_TEST(roomy.exit_code == 0, roomy.stderr_text);
  BOOST_TEST(roomy.stderr_text.empty(), roomy.stderr_text);
  BOOST_TEST(roomy.stdout_text.find(R"("max_connections":5000,)") != std::string::npos, roomy.stdout_text);
}

namespace {

// The integer after `key` ("\"max_body_bytes\":") in `text` (after `from`), or -1.
long long number_after(const std::string& text, const std::string& key, size_t from = 0) {
  const auto at = text.find(key, from);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + key.size()));
}

}  // namespace

// check-config prints max_body_bytes and max_inflight_body_mib as serve fits them at start
// (the limit to what one row of the store holds, the budget raised to one such body), with
// the warnings serve logs: it printed 1073741824 and 1 and said nothing while serve lowered
// the one to 999979520 and raised the other (black-box pass). Both use app/limits_that_fit.
BOOST_AUTO_TEST_CASE(check_config_prints_the_body_limit_and_budget_serve_fits) {
  TempDir dir;
  const std::string limits = "max_body_bytes = 1073741824\nmax_inflight_body_mib = 1\n";
  dir.write("secret", random_secret() + "\n");
  const std::string config =
      dir.write("check.toml", "listen = \"" + unserved_listen_address(29763) + "\"\ndatabase = \"" + dir.file("healthhook.db") +
                                  "\"\nsigning_secret_files = [\"secret\"]\n" + limits);

  // serve: what it runs with, from its warnings.
  long long served_body = -1, served_budget = -1;
  {
    ServerProcess server(dir, limits);
    BOOST_REQUIRE(server.wait_for_log("\"event\":\"max_body_bytes_lowered\"", std::chrono::seconds(5)));
    BOOST_REQUIRE(server.wait_for_log("\"event\":\"max_inflight_body_raised\"", std::chrono::seconds(5)));
    for (const auto& line : server.log_lines()) {
      if (line.find("\"event\":\"max_body_bytes_lowered\"") != std::string::npos) {
        served_body = number_after(line, "\"max_body_bytes\":");
      }
      if (line.find("\"event\":\"max_inflight_body_raised\"") != std::string::npos) {
        served_budget = number_after(line, "\"budget_bytes\":");
      }
    }
    BOOST_TEST(server.stop() == 0);
  }
  BOOST_REQUIRE(served_body > 0);
  BOOST_REQUIRE(served_body < 1073741824);
  BOOST_TEST(served_budget == served_body);

  // check-config: the same figures, printed, and the same warnings.
  const auto checked = run_healthhook({"check-config", "--config", config});
  BOOST_TEST(checked.exit_code == 0, checked.stderr_text);
  const std::string body = std::to_string(served_body);
  BOOST_TEST(checked.stderr_text.find("healthhook check-config: warning: max_body_bytes: 1073741824 lowered to " +
                                      body + " (") != std::string::npos,
             checked.stderr_text);
  BOOST_TEST(checked.stderr_text.find("): larger than the store can hold in one row\n") != std::string::npos,
             checked.stderr_text);
  BOOST_TEST(checked.stderr_text.find("healthhook check-config: warning: max_inflight_body_mib: 1 raised to " + body +
                                      " bytes (max_body_bytes): smaller than max_body_bytes") != std::string::npos,
             checked.stderr_text);
  BOOST_TEST(number_after(checked.stdout_text, "\"max_body_bytes\":") == served_body, checked.stdout_text);
  BOOST_TEST(number_after(checked.stdout_text, "\"max_inflight_body_bytes\":") == served_budget, checked.stdout_text);
  const auto settings = checked.stdout_text.find("\"settings\":");
  BOOST_REQUIRE(settings != std::string::npos);
  BOOST_TEST(number_after(checked.stdout_text, "\"max_body_bytes\":", settings) == served_body, checked.stdout_text);
  constexpr long long kMiB = 1024 * 1024;
  BOOST_TEST(number_after(checked.stdout_text, "\"max_inflight_body_mib\":", settings) ==
                 (served_budget + kMiB - 1) / kMiB,
             checked.stdout_text);

  // Limits that fit: as configured, nothing said.
  const std::string fitting = dir.write("fitting.toml", "listen = \"" + unserved_listen_address(29763) + "\"\ndatabase = \"" +
                                                            dir.file("healthhook.db") +
                                                            "\"\nsigning_secret_files = [\"secret\"]\n"
                                                            "max_body_bytes = 2097152\nmax_inflight_body_mib = 3\n");
  const auto fits = run_healthhook({"check-config", "--config", fitting});
  BOOST_TEST(fits.exit_code == 0, fits.stderr_text);
  BOOST_TEST(fits.stderr_text.empty(), fits.stderr_text);
  BOOST_TEST(number_after(fits.stdout_text, "\"max_body_bytes\":") == 2097152, fits.stdout_text);
  BOOST_TEST(number_after(fits.stdout_text, "\"max_inflight_body_bytes\":") == 3 * kMiB, fits.stdout_text);
  BOOST_TEST(number_after(fits.stdout_text, "\"max_inflight_body_mib\":") == 3, fits.stdout_text);
}

BOOST_AUTO_TEST_SUITE_END()  // check_config_limits_test
