// Settings that only one backend has (store/store_options.h): a SQLite file's keys given
// with a postgresql:// database are refused, naming the key, by `check-config`, `serve` and
// the commands that open a store, instead of being ignored while the operator believes
// them in force. Run through the real binary.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(backend_settings_test)

using namespace hh;
using test::run_healthhook;

namespace {

// The SQLite-only keys (app/store_settings.cpp), each with a value it accepts.
const std::vector<std::pair<std::string, std::string>> kSqliteOnly = {
    {"synchronous", "\"normal\""}, {"cache_size_mib", "32"}, {"max_database_mib", "100"}, {"min_free_disk_mib", "1"}};

std::string config(const std::string& database, const std::string& extra) {
  return "database = \"" + database + "\"\nlisten = \"127.0.0.1:0\"\n" + extra;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_sqlite_key_with_a_postgresql_database_is_refused_naming_it) {
  test::TempDir dir;
  dir.write("secret", test::random_secret());
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  for (const auto& [key, value] : kSqliteOnly) {
    BOOST_TEST_CONTEXT("key " << key) {
      dir.write("pg.toml", config(uri, key + " = " + value + "\n"));
      const auto checked = run_healthhook({"check-config", "--config", dir.file("pg.toml")});
      BOOST_TEST(checked.exit_code == 2, checked.stderr_text);
      // Named where it was set, as a load error is: the file and the key's line.
      BOOST_TEST(checked.stderr_text.find(dir.file("pg.toml") + ":3: " + key + ": applies to a SQLite database file only") !=
                     std::string::npos,
                 checked.stderr_text);
      // The same key from the environment, for a command that opens the store.
      dir.write("plain.toml", config(uri, ""));
      std::string env_name = "HEALTHHOOK_" + key;
      for (char& c : env_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const auto rebuilt = run_healthhook({"rebuild", "--config", dir.file("plain.toml")}, "",
                                          {env_name + "=" + (value.front() == '"' ? value.substr(1, value.size() - 2)
                                                                                 : value)});
      BOOST_TEST(rebuilt.exit_code == 2);
      BOOST_TEST(rebuilt.stderr_text.find(env_name + " (" + key + ": applies to a SQLite database file only") !=
                     std::string::npos,
                 rebuilt.stderr_text);
    }
  }
  // `serve` refuses to start rather than serve without them.
  dir.write("serve.toml", config(uri, "cache_size_mib = 32\n"));
  const auto served = run_healthhook({"serve", "--config", dir.file("serve.toml")}, "", {}, std::chrono::seconds(30));
  BOOST_TEST(served.exit_code == 2);
  BOOST_TEST(served.stderr_text.find("cache_size_mib: applies to a SQLite database file only") != std::string::npos,
             served.stderr_text);
}

// And the other way round: a PostgreSQL-only key with a SQLite file.
BOOST_AUTO_TEST_CASE(a_postgresql_key_with_a_sqlite_file_is_refused_naming_it) {
  test::TempDir dir;
  dir.write("secret", test::random_secret());
  dir.write("lite.toml", config(dir.file("h.db"), "processing_sessions = 2\n"));
  const auto checked = run_healthhook({"check-config", "--config", dir.file("lite.toml")});
  BOOST_TEST(checked.exit_code == 2, checked.stderr_text);
  BOOST_TEST(checked.stderr_text.find(dir.file("lite.toml") + ":3: processing_sessions: applies to a postgresql:// "
                                      "database only") != std::string::npos,
             checked.stderr_text);
  const auto served = run_healthhook({"serve", "--config", dir.file("lite.toml")}, "", {}, std::chrono::seconds(30));
  BOOST_TEST(served.exit_code != 0);
  BOOST_TEST(served.stderr_text.find("processing_sessions: applies to a postgresql:// database only") !=
                 std::string::npos,
             served.stderr_text);
  dir.write("pg.toml", config(test::PostgresCluster::shared().fresh_database(), "processing_sessions = 2\n"));
  const auto pg = run_healthhook({"check-config", "--config", dir.file("pg.toml")});
  BOOST_TEST(pg.exit_code == 0, pg.stderr_text);
}

BOOST_AUTO_TEST_CASE(the_same_keys_pass_with_a_sqlite_file_and_their_defaults_with_postgresql) {
  test::TempDir dir;
  dir.write("secret", test::random_secret());
  std::string all;
  for (const auto& [key, value] : kSqliteOnly) all += key + " = " + value + "\n";
  dir.write("lite.toml", config(dir.file("h.db"), all));
  const auto lite = run_healthhook({"check-config", "--config", dir.file("lite.toml")});
  BOOST_TEST(lite.exit_code == 0, lite.stderr_text);
  dir.write("pg.toml", config(test::PostgresCluster::shared().fresh_database(), "commit_deadline_ms = 3000\n"));
  const auto pg = run_healthhook({"check-config", "--config", dir.file("pg.toml")});
  BOOST_TEST(pg.exit_code == 0, pg.stderr_text);
}

// check-config connects as serve would: a server that is not there fails it, naming the
// database (it said ok where serve could not start); a database without a schema yet
// passes (serve creates the schema), as in the cases above.
BOOST_AUTO_TEST_CASE(check_config_connects_to_the_postgresql_store) {
  test::TempDir dir;
  dir.write("secret", test::random_secret());
  dir.write("gone.toml", config("postgresql://healthhook@127.0.0.1:1/healthhook", ""));
  const auto gone = run_healthhook({"check-config", "--config", dir.file("gone.toml")});
  BOOST_TEST(gone.exit_code == 2, gone.stderr_text);
  BOOST_TEST(gone.stderr_text.find("healthhook check-config: database: PostgreSQL: ") != std::string::npos,
             gone.stderr_text);
  BOOST_TEST(gone.stdout_text.find("\"status\":\"ok\"") == std::string::npos, gone.stdout_text);
  // A password in the URI: noted as serve warns, never shown.
  dir.write("pw.toml", config("postgresql://healthhook:hunter2secret@127.0.0.1:1/healthhook", ""));
  const auto password = run_healthhook({"check-config", "--config", dir.file("pw.toml")});
  BOOST_TEST(password.stderr_text.find("note: database: the URI holds a password") != std::string::npos,
             password.stderr_text);
  BOOST_TEST((password.stdout_text + password.stderr_text).find("hunter2secret") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
