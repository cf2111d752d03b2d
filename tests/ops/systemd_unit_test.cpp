// systemd/healthhook.service and systemd/healthhook.toml as shipped: the unit passes
// `systemd-analyze verify` and the `security` exposure threshold, carries the settings the
// spec asks for, and the example config documents every key and is accepted as written.
#include <boost/test/unit_test.hpp>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/load_settings.h"
#include "tests/support/server_process.h"

BOOST_AUTO_TEST_SUITE(systemd_unit_test)

using namespace hh::test;
namespace fs = std::filesystem;

namespace {

const std::string kSourceDir = HEALTHHOOK_SOURCE_DIR;
const std::string kUnit = kSourceDir + "/systemd/healthhook.service";
const std::string kExampleConfig = kSourceDir + "/systemd/healthhook.toml";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The program's full path from $PATH, or "" when it is not installed.
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  BOOST_REQUIRE_MESSAGE(pipe, "popen failed: " + command);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// "Key=value" lines of the unit (all sections), in order.
std::vector<std::string> unit_assignments() {
  std::vector<std::string> out;
  std::istringstream lines(read_file(kUnit));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '[') continue;
    out.push_back(line);
  }
  return out;
}

bool has_line(const std::string& expected) {
  const auto lines = unit_assignments();
  return std::find(lines.begin(), lines.end(), expected) != lines.end();
}

// The example with every "# key = value" line uncommented: what a user gets by enabling
// everything it lists.
std::string example_with_every_key_enabled() {
  static const std::regex commented_key(R"(^# ([a-z_]+ = .+)$)");
  std::istringstream lines(read_file(kExampleConfig));
  std::string line, out;
  while (std::getline(lines, line)) {
    std::smatch m;
    out += std::regex_match(line, m, commented_key) ? m[1].str() : line;
    out += "\n";
  }
  return out;
}

// Dotted names of the keys set in a TOML text with one level of [section].
std::set<std::string> keys_in(const std::string& toml) {
  static const std::regex section(R"(^\[([a-z_]+)\]\s*$)");
  static const std::regex key(R"(^([a-z_]+) = .+$)");
  std::set<std::string> out;
  std::string prefix;
  std::istringstream lines(toml);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, section)) prefix = m[1].str() + ".";
    else if (std::regex_match(line, m, key)) out.insert(prefix + m[1].str());
  }
  return out;
}

// The system calls `item` stands for, as this systemd lists them: a name itself, a group
// (@resources) every name in it and in the groups it holds.
std::set<std::string> syscalls_of(const std::string& analyze, const std::string& item) {
  if (!item.starts_with('@')) return {item};
  const auto listed = run(quoted(analyze) + " syscall-filter " + quoted(item));
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.output);
  std::set<std::string> out;
  std::istringstream lines(listed.output);
  std::string line;
  std::getline(lines, line);  // the group's own name
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string name = line.substr(first);
    if (name.starts_with('@')) {
      out.merge(syscalls_of(analyze, name));
    } else {
      out.insert(name);
    }
  }
  return out;
}

// What the unit's SystemCallFilter= lines allow, by systemd's rules (systemd.exec(5)): the
// first line decides the kind (here an allow list, as the unit writes it), each later line
// adds its names to that list or, with '~', takes them out, in order.
std::set<std::string> allowed_system_calls(const std::string& analyze) {
  std::set<std::string> allowed;
  bool first = true;
  for (const auto& line : unit_assignments()) {
    static const std::string kKey = "SystemCallFilter=";
    if (!line.starts_with(kKey)) continue;
    std::string value = line.substr(kKey.size());
    const bool removes = value.starts_with('~');
    if (removes) value.erase(0, 1);
    BOOST_REQUIRE_MESSAGE(!(first && removes), "the unit's first SystemCallFilter= line is a deny list: " << line);
    first = false;
    std::istringstream items(value);
    std::string item;
    while (items >> item) {
      for (const auto& call : syscalls_of(analyze, item)) {
        if (removes) {
          allowed.erase(call);
        } else {
          allowed.insert(call);
        }
      }
    }
  }
  return allowed;
}

}  // namespace

BOOST_AUTO_TEST_CASE(unit_has_the_settings_the_spec_asks_for) {
  for (const char* expected :
       {"Type=notify", "NotifyAccess=main", "ExecStart=/usr/bin/healthhook serve --config /etc/healthhook/healthhook.toml",
        "ExecReload=/bin/kill -HUP $MAINPID", "WatchdogSec=30s", "Restart=on-failure", "DynamicUser=yes",
        "StateDirectory=healthhook", "ConfigurationDirectory=healthhook", "LoadCredential=healthhook.signing-secret",
        "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "WantedBy=multi-user.target"}) {
    BOOST_TEST(has_line(expected), "missing: " << expected);
  }
}

BOOST_AUTO_TEST_CASE(unit_passes_systemd_analyze_verify) {
  const std::string analyze = find_program("systemd-analyze");
  if (analyze.empty()) {
    BOOST_TEST_MESSAGE("SKIPPED: systemd-analyze is not installed (package systemd)");
    return;
  }
  // verify checks that ExecStart= is executable: until installed, /usr/bin/healthhook is
  // the binary under test. The copy keeps the file name (verify takes the unit name from it).
  TempDir dir;
  std::string unit = read_file(kUnit);
  const std::string shipped = "ExecStart=/usr/bin/healthhook ";
  const auto at = unit.find(shipped);
  BOOST_REQUIRE(at != std::string::npos);
  unit.replace(at, shipped.size(), "ExecStart=" + healthhook_binary() + " ");
  const std::string copy = dir.write("healthhook.service", unit);

  const auto result = run(quoted(analyze) + " verify --man=no " + quoted(copy));
  BOOST_TEST_MESSAGE("systemd-analyze verify: exit " << result.exit_code << "\n" << result.output);
  BOOST_TEST(result.exit_code == 0, result.output);
  BOOST_TEST(result.output == "", result.output);  // warnings count as failures too
}

BOOST_AUTO_TEST_CASE(unit_exposure_is_below_2_0) {
  const std::string analyze = find_program("systemd-analyze");
  if (analyze.empty()) {
    BOOST_TEST_MESSAGE("SKIPPED: systemd-analyze is not installed (package systemd)");
    return;
  }
  // --offline (systemd >= 250) reads the unit file instead of asking a running systemd.
  // --threshold is in tenths: 19 fails anything at 2.0 or above.
  const auto result = run(quoted(analyze) + " security --offline=yes --threshold=19 " + quoted(kUnit));
  BOOST_TEST_MESSAGE(result.output.substr(result.output.rfind('\n', result.output.size() - 2) + 1));
  if (result.output.find("Unknown option") != std::string::npos ||
      result.output.find("unrecognized option") != std::string::npos) {
    BOOST_TEST_MESSAGE("SKIPPED: this systemd-analyze has no --offline/--threshold (systemd < 250)");
    return;
  }
  static const std::regex overall(R"(Overall exposure level for healthhook\.service: ([0-9]+\.[0-9]))");
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(result.output, m, overall), result.output);
  BOOST_TEST(std::stod(m[1].str()) < 2.0);
  BOOST_TEST(result.exit_code == 0);
}

// The forwarder gives its thread nice 19 (setpriority, forward/forwarder.cpp) so that
// forwarding never slows ingest; the unit's `~@resources` refused it, and every start with
// [[forward]] logged forward_priority_unchanged "Operation not permitted" (black-box pass).
// The rest of @resources stays refused: setrlimit above all (the LimitNOFILE comment).
BOOST_AUTO_TEST_CASE(unit_allows_setpriority_and_no_other_resource_call) {
  const std::string analyze = find_program("systemd-analyze");
  if (analyze.empty()) {
    BOOST_TEST_MESSAGE("SKIPPED: systemd-analyze is not installed (package systemd)");
    return;
  }
  const auto allowed = allowed_system_calls(analyze);
  BOOST_REQUIRE(allowed.count("read") == 1u);  // the allow list was read (@system-service)
  BOOST_TEST(allowed.count("setpriority") == 1u);
  for (const auto& call : syscalls_of(analyze, "@resources")) {
    if (call != "setpriority") BOOST_TEST(allowed.count(call) == 0u, call << " is allowed");
  }
  for (const auto& call : syscalls_of(analyze, "@privileged")) {
    BOOST_TEST(allowed.count(call) == 0u, call << " is allowed");
  }
}

BOOST_AUTO_TEST_CASE(example_config_documents_every_key) {
  const std::set<std::string> documented = keys_in(example_with_every_key_enabled());
  const auto& known = hh::config::known_keys();
  for (const auto& key : known) BOOST_TEST(documented.count(key) == 1u, "not in systemd/healthhook.toml: " << key);
  for (const auto& key : documented) {
    BOOST_TEST(std::count(known.begin(), known.end(), key) == 1, "not a setting: " << key);
  }
}

BOOST_AUTO_TEST_CASE(example_config_with_every_key_enabled_is_valid) {
  hh::config::Settings settings;
  auto applied = hh::config::apply_toml_text(settings, example_with_every_key_enabled(), "healthhook.toml");
  BOOST_REQUIRE_MESSAGE(applied.ok(), applied.error());
  auto valid = hh::config::validate(settings);
  BOOST_TEST(valid.ok(), valid.error());
  // The commented values are the defaults.
  const hh::config::Settings defaults;
  BOOST_TEST(settings.max_body_bytes == defaults.max_body_bytes);
  BOOST_TEST(settings.queue_high_water == defaults.queue_high_water);
  BOOST_TEST(settings.min_free_disk_mib == defaults.min_free_disk_mib);
  BOOST_TEST(settings.service.max_response_bytes == defaults.service.max_response_bytes);
  BOOST_TEST(settings.service.backoff_max_s == defaults.service.backoff_max_s);
}

BOOST_AUTO_TEST_CASE(example_config_passes_check_config_with_the_secret_as_a_credential) {
  // As under systemd: the signing secret in $CREDENTIALS_DIRECTORY under its credential
  // name; the database folder (/var/lib/healthhook) replaced by a temporary one.
  ::unsetenv("CREDENTIALS_DIRECTORY");
  TempDir credentials;
  credentials.write("healthhook.signing-secret", random_secret() + "\n");
  TempDir state;
  const auto result = run_healthhook(
      {"check-config", "--config", kExampleConfig, "--database", state.file("healthhook.db")}, "",
      {"CREDENTIALS_DIRECTORY=" + credentials.path().string()});
  BOOST_TEST(result.exit_code == 0, result.stderr_text);
  BOOST_TEST(result.stdout_text.find("\"signing_secrets\":1") != std::string::npos, result.stdout_text);
}

BOOST_AUTO_TEST_SUITE_END()  // systemd_unit_test
