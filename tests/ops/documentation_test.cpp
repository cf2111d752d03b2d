// The user's documentation against the program: the README's tour runs as written against
// a real server; the configuration reference in docs/configuration.md is the one the code
// prints; every configuration mistake docs/troubleshooting.md lists gives the message it
// quotes; every link of README.md and docs/ points at a file of this repository; every
// `healthhook COMMAND` the documents name exists; the manual pages are written.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <cstdlib>
#include <sys/wait.h>

#include "config/load_settings.h"
#include "config/settings_reference.h"
#include "store/sqlite/database.h"
#include "store/sqlite/file_access.h"
#include "store/unfinished_copy.h"
#include "store/unfinished_rebuild.h"
#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using hh::test::ProcessResult;
using hh::test::run_healthhook;
using hh::test::ServerProcess;
using hh::test::TempDir;

namespace {

const fs::path kSourceDir = HEALTHHOOK_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The user's documents: README.md, bench/README.md and every docs/*.md except the decision
// records.
std::vector<fs::path> user_documents() {
  std::vector<fs::path> documents = {kSourceDir / "README.md", kSourceDir / "bench" / "README.md"};
  for (const auto& entry : fs::directory_iterator(kSourceDir / "docs")) {
    if (entry.path().extension() == ".md") documents.push_back(entry.path());
  }
  return documents;
}

// The ```sh blocks of `text` between the heading `from` and the next "## " heading (all of
// them when `from` is empty).
std::vector<std::string> shell_blocks(const std::string& text, const std::string& from) {
  std::vector<std::string> blocks;
  size_t at = text.find(from);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, "no heading " << from);
  const size_t end = from.empty() ? text.size() : std::min(text.find("\n## ", at + from.size()), text.size());
  for (;;) {
    const size_t open = text.find("```sh\n", at);
    if (open == std::string::npos || open > end) break;
    const size_t close = text.find("\n```", open + 6);
    blocks.push_back(text.substr(open + 6, close - open - 6));
    at = close + 4;
  }
  return blocks;
}

// Runs `script` with bash in `dir`; stdout and stderr together.
ProcessResult run_bash(const TempDir& dir, const std::string& script) {
  const std::string file = dir.write("step.sh", "set -euo pipefail\ncd '" + dir.path().string() + "'\n" + script);
  // The binary runs bash through its own process helper: `healthhook` is not needed here.
  std::string output;
  FILE* pipe = ::popen(("bash '" + file + "' 2>&1").c_str(), "r");
  BOOST_REQUIRE(pipe);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  result.stdout_text = output;
  return result;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// What `healthhook --help` lists as commands.
std::set<std::string> commands() {
  const ProcessResult help = run_healthhook({"--help"});
  std::set<std::string> names;
  std::istringstream lines(help.stdout_text);
  std::string line;
  bool in_list = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("Subcommands:")) {
      in_list = true;
      continue;
    }
    if (in_list && line.size() > 2 && line[0] == ' ') names.insert(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

// `healthhook COMMAND --help`, or only its subcommand's when `rest` names one (`forward
// list …`, `jobs --database F show 42`): what a reader of that line would ask for; it must
// list the options the line gives, those of the command too. Memoised: the documents name
// each command many times.
std::string help_text(const std::string& command, const std::string& rest) {
  static std::map<std::string, std::string> cache;
  auto help = [](const std::vector<std::string>& args) {
    auto [it, added] = cache.try_emplace(args.size() == 1 ? args[0] : args[0] + " " + args[1]);
    if (added) {
      std::vector<std::string> with_help = args;
      with_help.push_back("--help");
      it->second = run_healthhook(with_help).stdout_text;
    }
    return it->second;
  };
  std::string text = help({command});
  const size_t subcommands = text.find("Subcommands:");
  if (subcommands == std::string::npos) return text;
  std::istringstream words(rest);
  for (std::string word; words >> word;) {  // the first word that is a listed subcommand
    if (word[0] == '-' || text.find("\n  " + word + " ", subcommands) == std::string::npos) continue;
    return help({command, word});
  }
  return text;
}

// The long options a help text lists before its subcommands ("  -o,--output FILE …": --output).
std::set<std::string> listed_options(const std::string& help) {
  std::set<std::string> options;
  std::istringstream lines(help.substr(0, help.find("\nSubcommands:")));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("  -")) continue;
    std::istringstream names(line.substr(2, line.find(' ', 2) - 2));
    for (std::string name; std::getline(names, name, ',');) {
      if (name.starts_with("--")) options.insert(name);
    }
  }
  return options;
}

// The subcommands a help text lists ("  list   List outbox entries").
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  const size_t list = help.find("\nSubcommands:\n");
  if (list == std::string::npos) return names;
  std::istringstream lines(help.substr(list + 14));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || !line.starts_with("  ")) break;
    if (line[2] != ' ') names.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(documentation_test)

BOOST_AUTO_TEST_CASE(the_readme_tour_runs_as_written) {
  TempDir dir;
  dir.write("read-token", "tour-read-token-0123456789\n");
  ServerProcess server(dir, "[read_api]\ntoken_file = \"read-token\"\n");
  fs::create_directories(dir.path() / "build-local" / "cli");
  fs::create_symlink(hh::test::healthhook_binary(), dir.path() / "build-local" / "cli" / "healthhook");

  const auto blocks = shell_blocks(read_file(kSourceDir / "README.md"), "## A five-minute tour");
  BOOST_REQUIRE_EQUAL(blocks.size(), 3u);
  const std::string address = "127.0.0.1:" + std::to_string(server.port());
  auto step = [&](size_t i) {
    // The README's variables are set in its first block; each block runs in a shell of its own.
    const std::string setup = blocks[0].substr(0, blocks[0].find('\n') + 1);  // hh=…
    return run_bash(dir, setup + replace_all(blocks[i], "localhost:8080", address));
  };

  const auto sent = step(0);
  BOOST_TEST(sent.exit_code == 0, sent.stdout_text);
  BOOST_TEST(sent.stdout_text.find("\"status\":\"stored\"") != std::string::npos, sent.stdout_text);
  // "Run the curl line again": the same message id, a duplicate.
  const std::string curl_line = blocks[0].substr(blocks[0].rfind("\ncurl ") + 1);
  const auto again = run_bash(dir, replace_all(blocks[0] + "\n" + curl_line, "localhost:8080", address));
  BOOST_TEST(again.stdout_text.find("\"status\":\"duplicate\"") != std::string::npos, again.stdout_text);

  // The processor applies right after the commit; give it a moment to land in the table.
  ProcessResult table;
  for (int attempt = 0; attempt < 100; ++attempt) {
    table = step(1);
    if (table.stdout_text.find("237") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_TEST(table.exit_code == 0, table.stdout_text);
  BOOST_TEST(table.stdout_text.find("u1") != std::string::npos, table.stdout_text);
  BOOST_TEST(table.stdout_text.find("237") != std::string::npos, table.stdout_text);

  const auto api = step(2);
  BOOST_TEST(api.exit_code == 0, api.stdout_text);
  BOOST_TEST(api.stdout_text.find("\"value\":237") != std::string::npos, api.stdout_text);
  BOOST_TEST(api.stdout_text.find("\"next_after\"") != std::string::npos, api.stdout_text);
}

// systemd/README.md's "Metrics" is where operations.md sends a reader for every metric:
// each family a serve with forwarding, follow-ups and retention on exposes is named there.
// (The PostgreSQL-only healthhook_processor_shards is checked by name.)
BOOST_AUTO_TEST_CASE(every_metric_is_in_the_metrics_table) {
  TempDir dir;
  dir.write("forward-secret", "whsec_" + std::string(32, 'A') + "\n");
  dir.write("api-key", "test-api-key\n");
  ServerProcess server(dir,
                       "[[forward]]\nurl = \"http://127.0.0.1:1/hook\"\nsecret_file = \"forward-secret\"\n"
                       "[service]\nbase_url = \"http://127.0.0.1:1\"\napi_key_file = \"api-key\"\n"
                       "[retention]\nbody_days = 30\n");
  const std::string metrics = hh::test::HttpClient(server.port()).get("/metrics").body;
  const std::string table = read_file(kSourceDir / "systemd" / "README.md");
  std::istringstream lines(metrics);
  size_t families = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("# TYPE ")) continue;
    const std::string name = line.substr(7, line.find(' ', 7) - 7);
    ++families;
    // A row may name a family's siblings by the tail after their common prefix ("`…_dead_total`").
    bool named = table.find("`" + name + "`") != std::string::npos || table.find("`" + name + "{") != std::string::npos;
    for (size_t at = name.find('_', 11); !named && at != std::string::npos; at = name.find('_', at + 1)) {
      named = table.find("`…" + name.substr(at) + "`") != std::string::npos;
    }
    BOOST_TEST(named, name << " is not in systemd/README.md's metrics table");
  }
  BOOST_TEST(families > 40u, metrics);
  BOOST_TEST(table.find("`healthhook_processor_shards`") != std::string::npos);
}

// operations.md's backup command, as written, finishes while deliveries keep arriving,
// and its copy is whole. (The shell's .backup, documented before, starts over at every
// write: on a large store under steady traffic it never finished.)
BOOST_AUTO_TEST_CASE(the_documented_backup_finishes_under_traffic) {
  TempDir dir;
  ServerProcess server(dir, "");
  const std::string doc = read_file(kSourceDir / "docs" / "operations.md");
  const std::string start = "`sudo sqlite3 /var/lib/healthhook/healthhook.db \"VACUUM INTO";
  const size_t at = doc.find(start);
  BOOST_REQUIRE(at != std::string::npos);
  std::string command = doc.substr(at + 1, doc.find('`', at + 1) - at - 1);
  command = replace_all(command, "sudo ", "");
  command = replace_all(command, "/var/lib/healthhook/healthhook.db", server.database());
  command = replace_all(command, "/root/healthhook-backup.db", dir.file("backup.db"));

  std::atomic<bool> sending{true};
  std::atomic<int> sent{0};
  std::thread traffic([&] {
    hh::test::HttpClient client(server.port());
    const std::string pad(20000, 'x');
    while (sending) {
      const int n = sent++;
      client.post_webhook(server.secret(), "b-" + std::to_string(n),
                          R"({"event_type":"daily.data.ping.created","data":{"pad":")" + pad + R"("}})");
    }
  });
  while (sent < 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto backup = run_bash(dir, "timeout 120 " + command);
  sending = false;
  traffic.join();
  BOOST_TEST(backup.exit_code == 0, command << ": " << backup.stdout_text);
  const auto checked = run_bash(dir, "sqlite3 " + dir.file("backup.db") +
                                         " 'PRAGMA integrity_check; SELECT count(*) > 100 FROM inbox;'");
  BOOST_TEST(checked.stdout_text == "ok\n1\n", checked.stdout_text);
}

BOOST_AUTO_TEST_CASE(the_configuration_reference_is_the_codes) {
  const std::string document = read_file(kSourceDir / "docs" / "configuration.md");
  const size_t begin = document.find(hh::config::kReferenceBegin);
  const size_t end = document.find(hh::config::kReferenceEnd);
  BOOST_REQUIRE(begin != std::string::npos);
  BOOST_REQUIRE(end != std::string::npos);
  const size_t body = begin + hh::config::kReferenceBegin.size() + 1;
  BOOST_TEST(document.substr(body, end - body) == hh::config::settings_reference_markdown(),
             "docs/configuration.md differs from the code: run build/cli/healthhook config reference --update "
             "docs/configuration.md");
  // Every key of the code is a row, and every row a key of the code.
  const auto& known = hh::config::known_keys();
  std::set<std::string> rows;
  const std::regex row(R"(\n\| `([a-z_.\[\]]+)` \|)");
  const std::string table = document.substr(begin, end - begin);
  for (std::sregex_iterator it(table.begin(), table.end(), row), last; it != last; ++it) rows.insert((*it)[1]);
  for (const auto& key : known) BOOST_TEST(rows.count(key) == 1u, "not in the reference: " << key);
  for (const auto& key : rows) {
    const bool top_level = std::find(known.begin(), known.end(), key) != known.end();
    BOOST_TEST((top_level || key.starts_with("forward[].")), "not a key: " << key);
  }
  // The printed command agrees with the function.
  const ProcessResult printed = run_healthhook({"config", "reference"});
  BOOST_TEST(printed.exit_code == 0);
  BOOST_TEST(printed.stdout_text == hh::config::settings_reference_markdown());
}

BOOST_AUTO_TEST_CASE(config_reference_update_rewrites_between_the_markers) {
  TempDir dir;
  const std::string file = dir.write("doc.md", "intro\n" + std::string(hh::config::kReferenceBegin) + "\nstale\n" +
                                                   std::string(hh::config::kReferenceEnd) + "\noutro\n");
  const ProcessResult updated = run_healthhook({"config", "reference", "--update", file});
  BOOST_TEST(updated.exit_code == 0, updated.stderr_text);
  const std::string text = read_file(file);
  BOOST_TEST(text.find("stale") == std::string::npos);
  BOOST_TEST(text.starts_with("intro\n"));
  BOOST_TEST(text.ends_with(std::string(hh::config::kReferenceEnd) + "\noutro\n"));
  BOOST_TEST(text.find("| `max_body_bytes` | integer | `4194304` | 1024 to 1073741824 |") != std::string::npos);

  const std::string no_markers = dir.write("plain.md", "nothing to update\n");
  const ProcessResult refused = run_healthhook({"config", "reference", "--update", no_markers});
  BOOST_TEST(refused.exit_code == 2);
  BOOST_TEST(refused.stderr_text.find("plain.md: marker lines missing or out of order") != std::string::npos, refused.stderr_text);
  BOOST_TEST(read_file(no_markers) == "nothing to update\n");
}

// Each configuration mistake, and the words of its message docs/troubleshooting.md must quote.
BOOST_AUTO_TEST_CASE(every_configuration_message_has_a_troubleshooting_entry) {
  struct Mistake {
    std::string toml;
    std::string quoted;  // what the document quotes, a part of the message
  };
  const Mistake mistakes[] = {
      {"max_body_byte = 1", "unknown key"},
      {"max_body_bytes = \"big\"", "expected an integer"},
      {"listen = 8080", "expected a string"},
      {"listen = 127.0.0.1:8080", "a string needs quotes"},
      {"[console]\nenabled = 1", "expected true or false"},
      {"signing_secret_files = \"secret\"", "expected an array of file names"},
      {"threads = 1000", "must be between"},
      {"synchronous = \"off\"", "must be \"full\" or \"normal\""},
      {"log_level = \"verbose\"", "must be debug, info, warn or error"},
      {"webhook_path = \"hooks\"", "must start with '/'"},
      {"webhook_path = \"/metrics\"", "collides with a built-in path"},
      {"webhook_path = \"/" + std::string(1100, 'w') + "\"", "longer than 1024 bytes"},
      {"webhook_path = \"/console/in\"\n[read_api]\ntoken_file = \"t\"\n[console]\nenabled = true",
       "collides with the console's /console/"},
      {"[console]\nenabled = true", "needs read_api.token_file"},
      {"listen = \"8080\"", "expected HOST:PORT"},
      {"database = \"\"", "must not be empty"},
      {"signing_secret_files = []", "at least one file is required"},
      {"[tls]\ncert_file = \"c.pem\"", "tls.cert_file and tls.key_file must be set together"},
      {"[service]\nbase_url = \"http://api.example\"", "must be an https:// URL"},
      {"[service]\nbase_url = \"https://api.example/?k=1\"", "must not contain user information, a query or a fragment"},
      {"[[service.teams]]\nteam_id = \"6b74423d-0504-4470-9afb-477252ccf67a\"", "required"},
      {"[[service.teams]]\nteam_id = \"team-eu\"\nbase_url = \"https://a.example\"\napi_key_file = \"k\"",
       "must be the team's UUID"},
      {"[[service.teams]]\nteam_id = \"6b74423d-0504-4470-9afb-477252ccf67a\"\nbase_url = \"https://a.example\"\n"
       "api_key_file = \"k\"\n[[service.teams]]\nteam_id = \"6B74423D-0504-4470-9AFB-477252CCF67A\"\n"
       "base_url = \"https://a.example\"\napi_key_file = \"k\"",
       "given twice"},
      {"[management]\nurl = \"https://m.example\"", "required with management.url"},
      {"[[forward]]\nurl = \"http://10.0.0.1/x\"\nsecret_file = \"s\"", "plain http:// only to a loopback host"},
      {"[[forward]]\nurl = \"https://u:p@b.example/x\"\nsecret_file = \"s\"",
       "must not contain user information or a fragment"},
      {"[[forward]]\nurl = \"https://b.example/x\"\nsecret_file = \"s\"\nmode = \"rows\"",
       "must be \"changes\" or \"deliveries\""},
      {"[[forward]]\nurl = \"https://b.example/x\"\nsecret_file = \"s\"\nmax_age = \"3 weeks\"",
       "expected a duration such as \"3d\""},
      {"[[forward]]\nurl = \"https://b.example/x\"\nsecret_file = \"s\"\nretries = 3", "unknown key"},
      {"[[forward]]\nurl = \"https://b.example/x#f\"\nsecret_file = \"s\"", "must not contain a fragment (#…)"},
      {"[[forward]]\nurl = \"https://b.example/x\"\nsecret_file = \"s\"\nevents = [\"[abc\"]",
       "the set opened by '[' at character "},
  };
  const std::string document = read_file(kSourceDir / "docs" / "troubleshooting.md");
  for (const Mistake& mistake : mistakes) {
    hh::config::Settings settings;
    auto applied = hh::config::apply_toml_text(settings, mistake.toml, "healthhook.toml");
    const std::string message = applied ? hh::config::validate(settings).error() : applied.error();
    BOOST_TEST(message.find(mistake.quoted) != std::string::npos,
               "the message for [" << mistake.toml << "] is \"" << message << "\", not \"" << mistake.quoted << "\"");
    BOOST_TEST(document.find("`" + mistake.quoted) != std::string::npos,
               "docs/troubleshooting.md has no entry for \"" << mistake.quoted << "\"");
  }
}

// The words an unfinished rebuild is reported with (store/unfinished_rebuild.h), as
// docs/troubleshooting.md quotes them; operations.md explains where each appears.
BOOST_AUTO_TEST_CASE(the_unfinished_rebuild_messages_are_quoted_as_printed) {
  const std::string troubleshooting = read_file(kSourceDir / "docs" / "troubleshooting.md");
  for (std::string_view message : {hh::store::kRebuildUnfinishedOffline, hh::store::kRebuildUnfinishedServing}) {
    BOOST_TEST(troubleshooting.find(std::string(message)) != std::string::npos,
               "docs/troubleshooting.md does not quote \"" << message << "\"");
    BOOST_TEST(message.starts_with(hh::store::kRebuildUnfinished));
  }
  const std::string operations = read_file(kSourceDir / "docs" / "operations.md");
  BOOST_TEST(operations.find("## Rebuild") != std::string::npos);
  BOOST_TEST(operations.find(std::string(hh::store::kRebuildUnfinished)) != std::string::npos);
}

// The refusal of a half-copied PostgreSQL store (store/unfinished_copy.h), quoted as printed
// after its "DATABASE: "; postgresql.md says it where it tells how to resume a copy.
BOOST_AUTO_TEST_CASE(the_unfinished_copy_message_is_quoted_as_printed) {
  const std::string troubleshooting = read_file(kSourceDir / "docs" / "troubleshooting.md");
  BOOST_TEST(troubleshooting.find("DATABASE: " + std::string(hh::store::kCopyUnfinished)) != std::string::npos,
             "docs/troubleshooting.md does not quote \"" << hh::store::kCopyUnfinished << "\"");
  const std::string postgresql = read_file(kSourceDir / "docs" / "postgresql.md");
  BOOST_TEST(postgresql.find("holds an unfinished `healthhook migrate`") != std::string::npos);
}

// The lines that name a file this user may not use (store/sqlite/file_access.h), as
// docs/troubleshooting.md quotes them after their "PATH: ".
BOOST_AUTO_TEST_CASE(the_file_access_refusals_are_quoted_as_printed) {
  namespace sq = hh::sqlite;
  const std::string troubleshooting = read_file(kSourceDir / "docs" / "troubleshooting.md");
  const std::pair<std::string_view, std::string_view> lines[] = {{sq::kMayNotRead, sq::kDatabaseFile},
                                                                 {sq::kMayNotReach, sq::kDatabaseFile},
                                                                 {sq::kMayNotCreate, sq::kDatabaseFile},
                                                                 {sq::kMayNotReadWrite, sq::kLockFile}};
  for (const auto& [words, file] : lines) {
    const std::string quoted = ": " + std::string(words) + std::string(file);
    BOOST_TEST(troubleshooting.find(quoted) != std::string::npos, "docs/troubleshooting.md does not quote \"" << quoted << "\"");
  }
}

// A message or comment that sends the reader to a section by its title (in parentheses: the
// document, README or docs/NAME.md, a comma and the title in quotes) names a document that
// has it: a heading or a bold item holding the title. Two errors sent the reader to a
// README section that was docs/postgresql.md's title.
BOOST_AUTO_TEST_CASE(every_cited_section_exists) {
  const std::regex citation(R"re(\((README|[A-Za-z0-9_./-]+\.md), \\?"([^"\\\n]+)\\?")re");
  const std::set<std::string> extensions = {".cpp", ".h", ".sql"};
  size_t cited = 0;
  for (auto it = fs::recursive_directory_iterator(kSourceDir, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.starts_with("build") || name.starts_with("."))) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || extensions.count(it->path().extension().string()) == 0) continue;
    const std::string text = read_file(it->path());
    for (std::sregex_iterator match(text.begin(), text.end(), citation), last; match != last; ++match) {
      ++cited;
      const std::string document = (*match)[1] == "README" ? "README.md" : std::string((*match)[1]);
      const std::string title = (*match)[2];
      const std::string where = fs::relative(it->path(), kSourceDir).string() + " cites (" + document + ", \"" + title + "\")";
      fs::path file = kSourceDir / document;
      if (!fs::exists(file)) file = kSourceDir / "docs" / document;
      BOOST_TEST(fs::exists(file), where << ": no such document");
      if (!fs::exists(file)) continue;
      const std::string body = read_file(file);
      bool found = body.find("**" + title) != std::string::npos;
      std::istringstream lines(body);
      for (std::string line; !found && std::getline(lines, line);) {
        found = line.starts_with("#") && line.find(title) != std::string::npos;
      }
      BOOST_TEST(found, where << ": the document has no such heading");
    }
  }
  BOOST_TEST(cited > 0u);  // the pattern still finds the citations
}

BOOST_AUTO_TEST_CASE(every_link_points_into_the_repository) {
  const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  for (const fs::path& document : user_documents()) {
    const std::string text = read_file(document);
    BOOST_TEST(text.find("../shared") == std::string::npos, document << " names a file outside the repository");
    for (std::sregex_iterator it(text.begin(), text.end(), link), last; it != last; ++it) {
      const std::string target = (*it)[1];
      if (target.starts_with("http://") || target.starts_with("https://")) continue;
      const fs::path resolved = fs::weakly_canonical(document.parent_path() / target);
      BOOST_TEST(fs::exists(resolved), document.filename() << ": broken link " << target);
      BOOST_TEST(resolved.string().starts_with(fs::weakly_canonical(kSourceDir).string()),
                 document.filename() << ": link out of the repository " << target);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_command_the_documents_name_exists) {
  const std::set<std::string> known = commands();
  BOOST_REQUIRE(known.count("serve") == 1u);
  // Command lines: each line of a ```sh block, and each `inline code` span, that starts
  // with `healthhook X` (or `sudo healthhook X`).
  const std::regex command_line(R"(^(?:sudo )?healthhook ([a-z][a-z-]+))");
  const std::regex inline_code("`([^`\n]+)`");
  for (const fs::path& document : user_documents()) {
    const std::string text = read_file(document);
    std::vector<std::string> code;
    for (std::sregex_iterator it(text.begin(), text.end(), inline_code), last; it != last; ++it) code.push_back((*it)[1]);
    for (const std::string& block : shell_blocks(text, "")) {
      std::istringstream lines(block);
      for (std::string line; std::getline(lines, line);) code.push_back(line);
    }
    for (const std::string& line : code) {
      std::smatch match;
      if (!std::regex_search(line, match, command_line)) continue;
      const std::string command = match[1];
      BOOST_TEST(known.count(command) == 1u, document.filename() << " names `healthhook " << command << "`");
      if (known.count(command) == 0) continue;
      // Each --flag on the line is one the command (or its subcommand) takes.
      const std::string help = help_text(command, line.substr(match.position(0) + match.length(0)));
      std::istringstream words(line);
      for (std::string word; words >> word;) {
        if (!word.starts_with("--")) continue;
        word = word.substr(0, word.find_first_of("=]),;`'\""));
        if (word.size() < 3) continue;
        BOOST_TEST(help.find(word) != std::string::npos,
                   document.filename() << ": the --help of `healthhook " << command << " …` does not list " << word
                                       << " (" << line << ")");
      }
    }
  }
}

// README.md: `healthhook COMMAND --help` lists the command's options. A command's options
// are taken after its subcommand too (`forward list --dead`, `jobs show 42 --database F`:
// CLI11's fallthrough), so the subcommand's --help lists them (it listed only -h and -V).
BOOST_AUTO_TEST_CASE(every_subcommand_help_lists_its_commands_options) {
  int checked = 0;
  for (const std::string& command : commands()) {
    const std::string help = run_healthhook({command, "--help"}).stdout_text;
    const std::set<std::string> options = listed_options(help);
    for (const std::string& subcommand : listed_subcommands(help)) {
      const ProcessResult sub_help = run_healthhook({command, subcommand, "--help"});
      BOOST_TEST(sub_help.exit_code == 0, command << " " << subcommand << ": " << sub_help.stderr_text);
      const std::set<std::string> listed = listed_options(sub_help.stdout_text);
      for (const std::string& option : options) {
        BOOST_TEST(listed.count(option) == 1u,
                   "`healthhook " << command << " " << subcommand << " --help` does not list " << option);
      }
      ++checked;
    }
  }
  BOOST_TEST(checked >= 20);  // forward's 5, jobs' 2, query's 13, user's 2, …
  // The findings: what docs/forwarding.md and docs/troubleshooting.md give after the subcommand.
  const std::set<std::string> list = listed_options(run_healthhook({"forward", "list", "--help"}).stdout_text);
  for (const char* option : {"--dead", "--destination", "--format", "--config", "--limit"}) {
    BOOST_TEST(list.count(option) == 1u, "forward list --help: " << option);
  }
  BOOST_TEST(listed_options(run_healthhook({"forward", "requeue", "--help"}).stdout_text).count("--dead") == 1u);
  const std::set<std::string> show = listed_options(run_healthhook({"jobs", "show", "--help"}).stdout_text);
  BOOST_TEST(show.count("--database") == 1u);
  BOOST_TEST(show.count("--config") == 1u);
}

// bench/README.md's command lines: each `bench/SCRIPT … --flag` names a script that exists
// and a flag its --help lists (scripts that take only positional arguments have no --help).
BOOST_AUTO_TEST_CASE(bench_readme_commands_take_their_flags) {
  const std::string text = read_file(kSourceDir / "bench" / "README.md");
  const std::regex script_line(R"(^(bench/[a-z/]+)\b(.*)$)");
  std::map<std::string, std::string> helps;
  int lines_checked = 0;
  for (const std::string& block : shell_blocks(text, "")) {
    std::istringstream lines(block);
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (!std::regex_search(line, match, script_line)) continue;
      const std::string script = match[1];
      BOOST_TEST(fs::exists(kSourceDir / script), "bench/README.md names " << script);
      if (!fs::exists(kSourceDir / script)) continue;
      auto [help, added] = helps.try_emplace(script);
      if (added) {
        TempDir dir;
        help->second = run_bash(dir, "cd '" + kSourceDir.string() + "' && " + script + " --help").stdout_text;
      }
      const std::string rest = match[2].str().substr(0, match[2].str().find('#'));  // not the comment
      std::istringstream words(rest);
      for (std::string word; words >> word;) {
        if (!word.starts_with("--")) continue;
        word = word.substr(0, word.find_first_of("=]),;`'\""));
        BOOST_TEST(help->second.find(word) != std::string::npos,
                   "bench/README.md: " << script << " takes no " << word << " (" << line << ")");
      }
      ++lines_checked;
    }
  }
  BOOST_TEST(lines_checked >= 8);
}

BOOST_AUTO_TEST_CASE(manual_pages_are_written_from_the_help) {
  TempDir dir;
  const ProcessResult written = run_healthhook({"man", "--output", dir.file("man")});
  BOOST_TEST(written.exit_code == 0, written.stderr_text);
  const std::string main_page = read_file(dir.path() / "man" / "healthhook.1");
  BOOST_TEST(main_page.starts_with(".TH HEALTHHOOK 1"));
  for (const std::string& command : commands()) {
    const fs::path page = dir.path() / "man" / ("healthhook-" + command + ".1");
    BOOST_TEST(fs::exists(page), "no page for " << command);
    std::string roff_name = "healthhook\\-";  // roff spells '-' as "\-"
    for (const char c : command) roff_name += c == '-' ? std::string("\\-") : std::string(1, c);
    BOOST_TEST(main_page.find(roff_name) != std::string::npos, command);
  }
  // The serve page carries its options as --help shows them.
  const std::string serve = read_file(dir.path() / "man" / "healthhook-serve.1");
  BOOST_TEST(serve.find("\\-\\-config") != std::string::npos);
  BOOST_TEST(serve.find(".SH EXIT STATUS") != std::string::npos);
  // An empty folder is a mistake, not the current folder.
  const ProcessResult empty = run_healthhook({"man", "--output", ""});
  BOOST_TEST(empty.exit_code == 2);
  BOOST_TEST(empty.stderr_text.find("empty: give a folder") != std::string::npos, empty.stderr_text);
  // A page that cannot be written whole is named with the reason and left no empty or cut
  // file (a full disk left 0-byte pages, and exit 0 when the last one fit): here a file-size
  // limit of one block.
  const std::string limited = dir.file("limited");
  const std::string line = "ulimit -f 1; exec '" + hh::test::healthhook_binary() + "' man --output '" + limited + "' 2> '" +
                           dir.file("man-stderr.txt") + "'";
  const int status = std::system(("sh -c \"" + line + "\"").c_str());
  BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 1), "status " << status);
  BOOST_TEST(read_file(dir.path() / "man-stderr.txt") ==
             "healthhook man: " + limited + "/healthhook.1: cannot write: File too large\n");
  BOOST_TEST(fs::is_empty(limited));
}

BOOST_AUTO_TEST_SUITE_END()
