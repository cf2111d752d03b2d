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
  return dir.write("healthhook.toml", "listen = \"127.0.0.1:53021\"\ndatabase = \"" + dir.file("healthhook.db") +
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

BOOST_AUTO_TEST_SUITE_END()  // check_config_limits_test
