// `--database` naming something that is not a regular file: a FIFO, a device (/dev/null), a
// folder. Every command refuses it in one line that names the path and what it is, before
// SQLite opens it, with the exit status of a store it cannot open (check-config 2, the
// others 1). SQLite opened a FIFO and waited on it for ever (check-config, query, capture),
// or said "disk I/O error"; check-config called /dev/null a good store, and serve, run as
// root, left /dev/null-journal behind.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(database_path_test)

using namespace hh::test;

namespace {

// Far longer than any command takes to refuse; a command that waits on a FIFO is killed.
constexpr auto kTimeout = std::chrono::seconds(20);

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// A command of the CLI with the flags it needs around `--database`, and the exit status of
// a store it cannot open.
struct Command {
  std::vector<std::string> words;
  int exit_code = 1;
};

std::vector<Command> commands_opening_the_store(const std::string& config, const std::string& capture) {
  return {
      {{"check-config", "--config", config}, 2},
      {{"serve", "--config", config}, 1},
      {{"query", "samples", "--config", config}, 1},
      {{"capture", "--config", config}, 1},
      {{"rebuild", "--config", config}, 1},
      {{"jobs", "--config", config}, 1},
      {{"replay", capture, "--config", config}, 1},
  };
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_fifo_a_device_or_a_folder_is_refused_unopened_by_every_command) {
  TempDir dir;
  const std::string secret = dir.write("secret", random_secret() + "\n");
  const std::string config = dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\nsigning_secret_files = [\"" +
                                                              secret + "\"]\n");
  const std::string capture = dir.write("capture.jsonl", "");
  const std::string fifo = dir.file("fifo.db");
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string folder = dir.file("folder.db");
  std::filesystem::create_directory(folder);
  const bool null_journal_before = std::filesystem::exists("/dev/null-journal");

  struct Target {
    std::string path;
    std::string kind;  // as the message names it
  };
  for (const Target& target : {Target{fifo, "a FIFO"}, Target{"/dev/null", "a character device"},
                               Target{folder, "a folder"}}) {
    for (Command command : commands_opening_the_store(config, capture)) {
      command.words.insert(command.words.end(), {"--database", target.path});
      const std::string what = joined(command.words);
      const ProcessResult result = run_healthhook(command.words, "", {}, kTimeout);
      BOOST_TEST(result.exit_code == command.exit_code, what << ": " << result.stderr_text);
      const bool check_config = command.words.front() == "check-config";
      const bool folder_kind = target.kind == "a folder";
      const std::string said =
          check_config ? "database: " + target.path + " is " + target.kind + (folder_kind ? "" : ", not a database file")
                       : "cannot open database " + target.path + ": it is " + target.kind +
                             (folder_kind ? "; give the database file's path" : ", not a database file");
      BOOST_TEST(result.stderr_text.find(said) != std::string::npos, what << ": " << result.stderr_text);
      BOOST_TEST(count_lines(result.stderr_text) == 1u, what << ": " << result.stderr_text);
    }
  }
  // Nothing made beside them: SQLite never opened them.
  for (const std::string& base : {fifo, folder}) {
    for (const char* suffix : {"-journal", "-wal", "-shm", "-processor.lock"}) {
      BOOST_TEST(!std::filesystem::exists(base + suffix), base + suffix);
    }
  }
  if (!null_journal_before) BOOST_TEST(!std::filesystem::exists("/dev/null-journal"));
}

// A symbolic link to a database file is the file: it opens as before.
BOOST_AUTO_TEST_CASE(a_link_to_a_database_file_is_taken) {
  TempDir dir;
  const std::string database = dir.file("healthhook.db");
  const std::string capture = dir.write("capture.jsonl", "");
  const ProcessResult created = run_healthhook({"replay", capture, "--database", database}, "", {}, kTimeout);
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.stderr_text);
  const std::string link = dir.file("link.db");
  std::filesystem::create_symlink(database, link);
  const ProcessResult queried = run_healthhook({"query", "samples", "--database", link}, "", {}, kTimeout);
  BOOST_TEST(queried.exit_code == 0, queried.stderr_text);
}

// A relative `database` is taken from the working directory (as every command takes it;
// users and tests rely on that), unlike secret, CA and TLS files, which are relative to the
// configuration's folder: check-config prints the absolute path it checked, so that the
// operator sees which file that was (it printed the name as written).
BOOST_AUTO_TEST_CASE(check_config_prints_a_relative_database_as_the_absolute_path_it_checked) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("conf"));
  dir.write("conf/secret", random_secret() + "\n");
  // From this test's working directory to the temporary folder: relative to the working
  // directory it names dir/state.db; relative to the configuration's folder it would be
  // another file.
  const std::string relative =
      std::filesystem::relative(dir.file("state.db"), std::filesystem::current_path()).string();
  BOOST_REQUIRE(!relative.starts_with("/"));
  const std::string config = dir.write("conf/healthhook.toml", "listen = \"" + unserved_listen_address(29765) + "\"\ndatabase = \"" + relative +
                                                                   "\"\nsigning_secret_files = [\"secret\"]\n");
  const auto checked = run_healthhook({"check-config", "--config", config});
  BOOST_TEST(checked.exit_code == 0, checked.stderr_text);
  const std::string absolute = std::filesystem::weakly_canonical(dir.file("state.db")).string();
  BOOST_TEST(checked.stdout_text.find("{\"status\":\"ok\",\"listen\":\"" + unserved_listen_address(29765) + "\",\"database\":\"" + absolute +
                                      "\",") != std::string::npos,
             checked.stdout_text);
  BOOST_TEST(checked.stdout_text.find("\"settings\":{\"listen\":\"" + unserved_listen_address(29765) + "\",\"database\":\"" + absolute +
                                      "\"") != std::string::npos,
             checked.stdout_text);
  // The setting's text says so (docs/configuration.md is generated from it).
  const auto reference = run_healthhook({"config", "reference"});
  BOOST_TEST(reference.stdout_text.find("A relative file name is taken from the working directory") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()  // database_path_test
