// What a `database = …` setting may show, and when it warns (store/database_location.h):
// URIs read the way libpq reads them before their credentials are masked (a password that
// holds '?', '@', '/' or %-escapes, password= and sslpassword= in the query, key/value
// strings); libpq's own messages with what they quote of a credential hidden; no command
// printing a password end to end; the plain-text warning for a TCP host without sslmode.
#include <boost/test/unit_test.hpp>

#include "store/database_location.h"
#include "tests/support/postgres_cluster.h"
#include "tests/support/server_process.h"
#include "tests/support/temp_dir.h"

BOOST_AUTO_TEST_SUITE(database_location_test)

using namespace hh;

namespace {

// A configuration for the commands below: a signing secret, and `database`.
std::string location_config(test::TempDir& dir, const std::string& database) {
  dir.write("secret", test::random_secret() + "\n");
  return dir.write("healthhook.toml", "signing_secret_files = [\"secret\"]\ndatabase = \"" + database + "\"\n");
}

}  // namespace

BOOST_AUTO_TEST_CASE(uris_are_read_as_libpq_reads_them_before_the_password_is_masked) {
  const std::pair<std::string, std::string> cases[] = {
      // The URI: libpq ends the user part at the first '@' or '/', not at a '?'.
      {"postgresql://hh:pa?ss%40w0rd@host/hh", "postgresql://hh:***@host/hh"},
      {"postgresql://hh:pa?ss%40w0rd@host", "postgresql://hh:***@host"},
      {"postgresql://app:s3cret@db.internal:5432/hh?sslmode=require",
       "postgresql://app:***@db.internal:5432/hh?sslmode=require"},
      // Unescaped '@' and '/' in the password: libpq cuts it there, so both readings go.
      {"postgresql://hh:p@ss/w0rd@db.internal:5432/hh?sslmode=require",
       "postgresql://hh:***@db.internal:5432/hh?sslmode=require"},
      {"postgresql://hh:s3cret@[::1]:5432/hh", "postgresql://hh:***@[::1]:5432/hh"},
      // '@', '/' and '?' raw in it (attack, stop 76: "Pw1" alone was hidden).
      {"postgresql://hh:Pw1@PARTA/PARTB?PARTC@127.0.0.1:5432/hh3", "postgresql://hh:***@127.0.0.1:5432/hh3"},
      {"postgres://hh:%73%33cret@db/hh", "postgres://hh:***@db/hh"},
      // Parameters, keys percent-decoded as libpq decodes them.
      {"postgresql:///hh?host=/run&password=s3cret&user=app", "postgresql:///hh?host=/run&password=***&user=app"},
      {"postgresql://hh@db/hh?password=s3cret&sslmode=require", "postgresql://hh@db/hh?password=***&sslmode=require"},
      {"postgresql://db/hh?pass%77ord=s3cret", "postgresql://db/hh?pass%77ord=***"},
      {"postgresql://db/hh?sslmode=verify-full&sslpassword=k3y", "postgresql://db/hh?sslmode=verify-full&sslpassword=***"},
      {"postgresql://db?password=s3c@ret", "postgresql://db?password=***"},
      {"postgresql://db:5432?password=s3c@ret", "postgresql://db:***"},  // more hidden, never less
      // Nothing to hide.
      {"postgresql://app@db/hh", "postgresql://app@db/hh"},
      {"postgresql://db.internal:5432/hh?application_name=a", "postgresql://db.internal:5432/hh?application_name=a"},
      {"/var/lib/healthhook/a:b@c.db", "/var/lib/healthhook/a:b@c.db"},
      {"healthhook.db", "healthhook.db"},
      // libpq key/value strings.
      {"host=db user=hh password=s3cret sslmode=require", "host=db user=hh password=*** sslmode=require"},
      {"host=db password = 'pa ss\\'word' dbname=hh", "host=db password = *** dbname=hh"},
      {"host=db sslpassword=k3y", "host=db sslpassword=***"},
      {"host=db password", "host=db ***"},  // not readable: the rest is hidden
  };
  for (const auto& [uri, shown] : cases) BOOST_TEST(store::loggable_location(uri) == shown, uri);
}

BOOST_AUTO_TEST_CASE(a_key_value_string_is_not_taken_for_a_file_name) {
  auto kind = store::database_kind("host=db user=hh password=s3cret");
  BOOST_REQUIRE(!kind);
  BOOST_TEST(kind.error().find("postgresql:// URI") != std::string::npos, kind.error());
  BOOST_TEST(kind.error().find("s3cret") == std::string::npos);
  BOOST_TEST((store::database_kind("hostname.db").value() == store::DatabaseKind::sqlite_file));
  // A second '@' is a raw one in the password (or a parameter): libpq would take the rest
  // for the host and the query, and quote pieces of it.
  kind = store::database_kind("postgresql://hh:Pw1@PARTA/PARTB?PARTC@127.0.0.1:5432/hh3");
  BOOST_REQUIRE(!kind);
  BOOST_TEST(kind.error().find("more than one '@'") != std::string::npos, kind.error());
  BOOST_TEST(kind.error().find("PART") == std::string::npos);
  BOOST_TEST((store::database_kind("postgresql://hh:Pw1%40PARTA@127.0.0.1/hh").value() ==
              store::DatabaseKind::postgresql));
  BOOST_TEST((store::database_kind("./host=x.db").value() == store::DatabaseKind::sqlite_file));
}

BOOST_AUTO_TEST_CASE(what_libpq_quotes_of_a_credential_is_hidden) {
  const auto credentials = store::credentials_in("postgresql://hh:s3cr%zzet@db/hh", "fr0m-a-file");
  BOOST_TEST(store::redact_credentials("invalid percent-encoded token: \"s3cr%zzet\"", credentials) ==
             "invalid percent-encoded token: \"***\"");
  BOOST_TEST(store::redact_credentials("password fr0m-a-file refused", credentials) == "password *** refused");
  // An unescaped '/' makes libpq read the password's start as a port.
  BOOST_TEST(store::redact_credentials("invalid integer value \"pa\" for connection option \"port\"",
                                       store::credentials_in("postgresql://hh:pa/ss@db/hh")) ==
             "invalid integer value \"***\" for connection option \"port\"");
  BOOST_TEST(store::redact_credentials("could not translate host name \"db\"",
                                       store::credentials_in("postgresql://hh:s3cret@db/hh")) ==
             "could not translate host name \"db\"");
  BOOST_TEST(store::redact_credentials("x \"k3y\" y", store::credentials_in("host=db sslpassword=k3y")) ==
             "x \"***\" y");
}

BOOST_AUTO_TEST_CASE(a_tcp_host_without_sslmode_is_a_plain_text_risk) {
  const auto risk = [](const std::string& uri, const char* sslmode = nullptr, const char* host = nullptr) {
    return store::plaintext_risk(uri, sslmode, host);
  };
  const auto warned = risk("postgresql://hh@db.internal/hh");
  BOOST_REQUIRE(warned);
  BOOST_TEST(warned->find("db.internal") != std::string::npos, *warned);
  BOOST_TEST(warned->find("sslmode=verify-full") != std::string::npos, *warned);
  BOOST_TEST(risk("postgresql://hh@db.internal/hh?sslmode=prefer").has_value());
  BOOST_TEST(risk("postgresql://hh@db.internal/hh?sslmode=allow").has_value());
  BOOST_TEST(risk("postgresql://db1,db2:5433/hh").has_value());
  BOOST_TEST(risk("postgresql:///hh?hostaddr=10.0.0.5").has_value());
  BOOST_TEST(risk("postgresql:///hh", nullptr, "db.internal").has_value());  // PGHOST
  BOOST_TEST(risk("postgresql://db/hh", "prefer").has_value());               // PGSSLMODE
  // Encrypted (or explicitly not), or not over a network.
  BOOST_TEST(!risk("postgresql://hh@db.internal/hh?sslmode=verify-full"));
  BOOST_TEST(!risk("postgresql://hh@db.internal/hh?sslmode=require"));
  BOOST_TEST(!risk("postgresql://hh@db.internal/hh?sslmode=disable"));
  BOOST_TEST(!risk("postgresql://db/hh", "verify-full"));
  BOOST_TEST(!risk("postgresql:///hh"));
  BOOST_TEST(!risk("postgresql:///hh?host=/var/run/postgresql"));
  BOOST_TEST(!risk("postgresql://%2Fvar%2Frun%2Fpostgresql/hh"));
  BOOST_TEST(!risk("postgresql://localhost/hh"));
  BOOST_TEST(!risk("postgresql://127.0.0.1:5432/hh"));
  BOOST_TEST(!risk("postgresql://[::1]/hh"));
  BOOST_TEST(!risk("healthhook.db"));
}

// End to end: check-config prints the location masked; a command that fails to connect
// shows libpq's complaint without the password; a key/value string is refused unquoted.
BOOST_AUTO_TEST_CASE(no_command_prints_the_database_password) {
  test::TempDir dir;
  // check-config connects (the test cluster lets the user in without its password).
  const std::string live = test::PostgresCluster::shared().fresh_database();
  BOOST_REQUIRE(live.starts_with("postgresql:///"));
  const std::string passworded = "postgresql://healthhook:pa%3Fss%40w0rd@/" + live.substr(std::string("postgresql:///").size());
  auto checked = test::run_healthhook({"check-config", "--config", location_config(dir, passworded)});
  BOOST_TEST(checked.exit_code == 0, checked.stderr_text);
  BOOST_TEST(checked.stdout_text.find("\"database\":\"postgresql://healthhook:***@/") != std::string::npos,
             checked.stdout_text);
  // And one it cannot reach: refused, the password still never shown.
  auto unreachable =
      test::run_healthhook({"check-config", "--config", location_config(dir, "postgresql://hh:pa?ss%40w0rd@host/hh")});
  BOOST_TEST(unreachable.exit_code == 2, unreachable.stderr_text);
  for (const auto& output : {checked.stdout_text, checked.stderr_text, unreachable.stdout_text, unreachable.stderr_text}) {
    BOOST_TEST(output.find("w0rd") == std::string::npos, output);
    BOOST_TEST(output.find("pa?ss") == std::string::npos, output);
    BOOST_TEST(output.find("pa%3Fss") == std::string::npos, output);
  }

  // A password libpq cannot read (a bad %-escape): it says so, quoting it.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"purge-user", "u1", "--dry-run"}, std::vector<std::string>{"jobs"},
        std::vector<std::string>{"serve"}}) {
    auto args = command;
    for (const char* flag : {"--database", "postgresql://hh:s3cr%zzet@127.0.0.1:1/hh"}) args.push_back(flag);
    if (command.front() == "serve") {
      args.insert(args.end(), {"--config", location_config(dir, "healthhook.db"), "--listen", "127.0.0.1:0"});
    }
    auto failed = test::run_healthhook(args);
    BOOST_TEST(failed.exit_code != 0, command.front());
    BOOST_TEST(failed.stderr_text.find("s3cr") == std::string::npos, command.front() << ": " << failed.stderr_text);
    BOOST_TEST(failed.stdout_text.find("s3cr") == std::string::npos, command.front() << ": " << failed.stdout_text);
  }

  auto key_value = test::run_healthhook(
      {"check-config", "--config", location_config(dir, "host=db user=hh password=s3cret")});
  BOOST_TEST(key_value.exit_code == 2);
  BOOST_TEST(key_value.stderr_text.find("postgresql:// URI") != std::string::npos, key_value.stderr_text);
  BOOST_TEST(key_value.stderr_text.find("s3cret") == std::string::npos, key_value.stderr_text);
  BOOST_TEST(key_value.stdout_text.find("s3cret") == std::string::npos, key_value.stdout_text);
}

BOOST_AUTO_TEST_CASE(check_config_and_serve_warn_of_a_plain_text_database_connection) {
  test::TempDir dir;
  // check-config says it before it connects (here it cannot: the name does not resolve).
  auto plain = test::run_healthhook({"check-config", "--config", location_config(dir, "postgresql://hh@db.invalid/hh")});
  BOOST_TEST(plain.exit_code == 2, plain.stderr_text);
  BOOST_TEST(plain.stderr_text.find("note: database: the connection to db.invalid may travel in plain text") !=
                 std::string::npos,
             plain.stderr_text);
  auto verified = test::run_healthhook(
      {"check-config", "--config", location_config(dir, "postgresql://hh@db.invalid/hh?sslmode=verify-full")});
  BOOST_TEST(verified.exit_code == 2, verified.stderr_text);
  BOOST_TEST(verified.stderr_text.find("plain text") == std::string::npos, verified.stderr_text);

  // serve says it before it tries to connect (here it cannot: nothing answers there).
  auto serve = test::run_healthhook(
      {"serve", "--config", location_config(dir, "postgresql://hh@10.255.255.1/hh?connect_timeout=1"), "--listen",
       "127.0.0.1:0"});
  BOOST_TEST(serve.exit_code != 0);
  BOOST_TEST(serve.stderr_text.find("\"database_plaintext_risk\"") != std::string::npos, serve.stderr_text);
  BOOST_TEST(serve.stderr_text.find("database_password_in_uri") == std::string::npos, serve.stderr_text);
  // A password in the URI: said (never shown), since it is where secrets never go.
  auto passworded = test::run_healthhook(
      {"serve", "--config",
       location_config(dir, "postgresql://hh:s3cr3t@10.255.255.1/hh?sslmode=verify-full&connect_timeout=1"),
       "--listen", "127.0.0.1:0"});
  BOOST_TEST(passworded.exit_code != 0);
  BOOST_TEST(passworded.stderr_text.find("\"database_password_in_uri\"") != std::string::npos, passworded.stderr_text);
  BOOST_TEST(passworded.stderr_text.find("s3cr3t") == std::string::npos, passworded.stderr_text);
}

BOOST_AUTO_TEST_SUITE_END()
