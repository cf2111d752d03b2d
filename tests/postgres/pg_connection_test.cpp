// The libpq layer (store/postgres/connection.h) and the schema's migrations, on a real
// server: parameters as sent, bytes kept exact, pipelines, error kinds, migrations once.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "store/open_readers.h"
#include "store/postgres/database.h"
#include "store/postgres/migrations.h"
#include "store/postgres/read/read_session.h"
#include "tests/fake_service/test_certificates.h"
#include "tests/support/postgres_cluster.h"

BOOST_AUTO_TEST_SUITE(pg_connection_test)

using namespace hh;
using namespace std::chrono_literals;

namespace {

pg::Connection open_fresh() {
  auto db = store::connect({test::PostgresCluster::shared().fresh_database(), ""});
  BOOST_REQUIRE_MESSAGE(db, db.error());
  return std::move(*db);
}

// A login role of the shared cluster (made once), the database a fresh URI names, and that
// URI as another role.
void ensure_role(test::PostgresCluster& cluster, const std::string& role) {
  cluster.psql("postgres", "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" + role +
                               "') THEN CREATE ROLE " + role + " LOGIN; END IF; END $$");
}
std::string database_of(const std::string& uri) {
  const size_t begin = std::string("postgresql:///").size();
  return uri.substr(begin, uri.find('?') - begin);
}
std::string as_role(std::string uri, const std::string& role) {
  uri.replace(uri.find("user=healthhook"), 15, "user=" + role);
  return uri;
}

// A TCP socket of 127.0.0.1 that only listens: the kernel completes the handshake, nothing
// reads what is sent (a hung server, a proxy in front of a dead one). Closed at the end of
// the case, also when a check ends it.
struct SilentListener {
  SilentListener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    BOOST_REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    BOOST_REQUIRE(::listen(fd, 8) == 0);
    BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port = std::to_string(ntohs(address.sin_port));
  }
  ~SilentListener() { ::close(fd); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  // Resets what waits on it (a connect that has no timeout of its own ends).
  void reset_all() const { ::shutdown(fd, SHUT_RDWR); }
  int fd = -1;
  std::string port;
};

}  // namespace

BOOST_AUTO_TEST_CASE(parameters_and_bytes_arrive_exactly_as_sent) {
  pg::Connection db = open_fresh();
  BOOST_REQUIRE(db.exec("CREATE TABLE t (i bigint, d double precision, s text, b bytea)"));
  const std::string body("a\0b\xff\"'\\", 7);
  const std::string view_source = "no terminator here";
  pg::Params params;
  params.add(int64_t{-9007199254740993}).add(0.1).add(std::string_view(view_source).substr(0, 2)).bytes(body);
  auto inserted = db.query("INSERT INTO t VALUES ($1, $2, $3, $4)", params);
  BOOST_REQUIRE_MESSAGE(inserted, inserted.error());
  BOOST_TEST(inserted->affected() == 1);
  auto rows = db.query("SELECT i, d, s, encode(b, 'hex'), length(b) FROM t");
  BOOST_REQUIRE_MESSAGE(rows, rows.error());
  BOOST_REQUIRE(rows->size() == 1);
  BOOST_TEST(rows->integer(0, 0) == -9007199254740993);
  BOOST_TEST(rows->real(0, 1) == 0.1);
  BOOST_TEST(rows->text(0, 2) == "no");
  BOOST_TEST(rows->text(0, 3) == "610062ff22275c");
  BOOST_TEST(rows->integer(0, 4) == 7);
  auto nulls = db.query("SELECT $1::text IS NULL", pg::Params().add(std::optional<std::string_view>()));
  BOOST_REQUIRE(nulls);
  BOOST_TEST(nulls->boolean(0, 0));
}

// A large value is stored compressed with lz4 where the server has it (the test cluster's
// Debian build has), else with pglz as before; either way it reads back whole.
BOOST_AUTO_TEST_CASE(large_values_are_compressed_with_lz4_where_the_server_has_it) {
  pg::Connection db = open_fresh();
  auto methods = db.query("SELECT enumvals::text FROM pg_settings WHERE name = 'default_toast_compression'");
  BOOST_REQUIRE_MESSAGE(methods, methods.error());
  const bool has_lz4 = methods->size() == 1 && methods->text(0, 0).find("lz4") != std::string_view::npos;
  const std::string expected = has_lz4 ? "lz4" : "pglz";
  BOOST_REQUIRE(db.exec("CREATE TABLE t (b bytea)"));
  // 17,500 bytes of JSON-like text: compressible, far over the 2 KB where PostgreSQL compresses.
  const std::string sql_body = "convert_to(repeat('{\"bpm\":61,\"t\":\"2024-01-01\"},', 625), 'UTF8')";
  BOOST_REQUIRE(db.exec("INSERT INTO t VALUES (" + sql_body + ")"));
  auto stored = db.query("SELECT pg_column_compression(b), length(b), b = " + sql_body + " FROM t");
  BOOST_REQUIRE_MESSAGE(stored, stored.error());
  BOOST_TEST(stored->text(0, 0) == expected);
  BOOST_TEST(stored->integer(0, 1) == 17500);
  BOOST_TEST(stored->boolean(0, 2));
}

BOOST_AUTO_TEST_CASE(a_pipeline_answers_every_statement_in_order_and_stops_at_an_error) {
  pg::Connection db = open_fresh();
  BOOST_REQUIRE(db.exec("CREATE TABLE t (k text PRIMARY KEY)"));
  {
    auto pipeline = pg::Pipeline::begin(db);
    BOOST_REQUIRE(pipeline);
    BOOST_REQUIRE(pipeline->send("BEGIN"));
    BOOST_REQUIRE(pipeline->send("INSERT INTO t VALUES ($1) RETURNING k", pg::Params().add("a")));
    BOOST_REQUIRE(pipeline->send("INSERT INTO t VALUES ($1) RETURNING k", pg::Params().add("b")));
    BOOST_REQUIRE(pipeline->send("COMMIT"));
    auto results = pipeline->finish();
    BOOST_REQUIRE_MESSAGE(results, results.error());
    BOOST_REQUIRE(results->size() == 4u);
    BOOST_TEST((*results)[2].text(0, 0) == "b");
  }
  {
    auto pipeline = pg::Pipeline::begin(db);
    BOOST_REQUIRE(pipeline);
    BOOST_REQUIRE(pipeline->send("BEGIN"));
    BOOST_REQUIRE(pipeline->send("INSERT INTO t VALUES ('c')"));
    BOOST_REQUIRE(pipeline->send("INSERT INTO t VALUES ('a')"));  // duplicate key
    BOOST_REQUIRE(pipeline->send("COMMIT"));
    auto results = pipeline->finish();
    BOOST_REQUIRE(!results);
    BOOST_TEST((results.error_kind() == ErrorKind::data));
    BOOST_TEST(results.error().find("duplicate key") != std::string::npos, results.error());
  }
  BOOST_REQUIRE(db.exec("ROLLBACK"));
  BOOST_TEST(db.query_int("SELECT count(*) FROM t")->value_or(-1) == 2);  // 'c' rolled back
}

BOOST_AUTO_TEST_CASE(a_commit_after_an_error_is_reported_as_a_failure) {
  pg::Connection db = open_fresh();
  auto txn = pg::Transaction::begin(db);
  BOOST_REQUIRE(txn);
  BOOST_REQUIRE(!db.exec("SELECT 1/0"));
  auto committed = txn->commit();
  BOOST_TEST(!committed);
}

BOOST_AUTO_TEST_CASE(error_kinds_follow_the_sqlstate) {
  BOOST_TEST((pg::error_kind("23505") == ErrorKind::data));
  BOOST_TEST((pg::error_kind("22P02") == ErrorKind::data));
  BOOST_TEST((pg::error_kind("40001") == ErrorKind::busy));
  BOOST_TEST((pg::error_kind("40P01") == ErrorKind::busy));
  BOOST_TEST((pg::error_kind("55P03") == ErrorKind::busy));
  BOOST_TEST((pg::error_kind("53100") == ErrorKind::full));
  BOOST_TEST((pg::error_kind("08006") == ErrorKind::unavailable));
  BOOST_TEST((pg::error_kind("42P01") == ErrorKind::other));
}

BOOST_AUTO_TEST_CASE(a_server_that_is_not_there_is_unavailable_and_the_uri_is_not_repeated) {
  test::TempDir empty;
  auto db = pg::Connection::open("postgresql:///x?host=" + empty.path().string() + "&port=1&password=hunter2");
  BOOST_REQUIRE(!db);
  BOOST_TEST((db.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(db.error().find("hunter2") == std::string::npos, db.error());
}

// A server that accepts the connection and never answers (a hung server, a proxy in
// front of a dead one): the attempt fails after connect_timeout (10 s unless the URI
// says), as unavailable, instead of waiting forever (libpq's default). The socket only
// listens: the kernel completes the handshake, nothing reads the startup packet.
BOOST_AUTO_TEST_CASE(a_server_that_never_answers_fails_the_connect_after_its_timeout) {
  SilentListener listener;
  for (const std::string& uri : {"postgresql://127.0.0.1:" + listener.port + "/x",
                                 "postgresql://127.0.0.1:" + listener.port + "/x?connect_timeout=2"}) {
    auto attempt = std::async(std::launch::async, [uri] { return pg::Connection::open(uri); });
    // Bounded: without a timeout the attempt would wait forever; closing the listener then
    // resets the connection, which ends it.
    const bool ended = attempt.wait_for(60s) == std::future_status::ready;
    if (!ended) listener.reset_all();
    BOOST_REQUIRE_MESSAGE(ended, uri << ": still connecting after 60 s");
    auto db = attempt.get();
    BOOST_REQUIRE(!db);
    BOOST_TEST((db.error_kind() == ErrorKind::unavailable));
    BOOST_TEST(db.error().find("timeout") != std::string::npos, db.error());
  }
}

// With a reply timeout (the listener's reads: decision 080), the same attempt gives up when
// it has passed, whatever the URI's connect_timeout (libpq's is 2 s at the least).
BOOST_AUTO_TEST_CASE(a_reply_timeout_bounds_the_connect_to_a_server_that_never_answers) {
  SilentListener listener;
  const std::string uri = "postgresql://127.0.0.1:" + listener.port + "/x?connect_timeout=600";
  auto attempt = std::async(std::launch::async, [uri] { return pg::Connection::open(uri, "", 300ms); });
  const bool ended = attempt.wait_for(60s) == std::future_status::ready;
  if (!ended) listener.reset_all();
  BOOST_REQUIRE_MESSAGE(ended, "still connecting after 60 s");
  auto db = attempt.get();
  BOOST_REQUIRE(!db);
  BOOST_TEST((db.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(db.error().find("no answer within 300 ms") != std::string::npos, db.error());
}

// A statement not answered within the reply timeout (here one that sleeps; a frozen server
// in pg_outage_test) fails as unavailable and closes the connection: it is not used again
// with the statement still outstanding, every later call fails at once, and a reader opens
// a new one. The same in a pipeline. Statements answered in time are unaffected.
BOOST_AUTO_TEST_CASE(a_statement_not_answered_within_the_reply_timeout_closes_its_connection) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto db = pg::Connection::open(uri, "", 500ms);
  BOOST_REQUIRE_MESSAGE(db, db.error());
  BOOST_TEST(db->query_int("SELECT 6 * 7")->value_or(0) == 42);
  BOOST_TEST(db->exec("SELECT 1; SELECT 2").ok());
  const auto failed = db->exec("SELECT 1; SELECT 1 / 0");  // the error that ends the statements
  BOOST_TEST(!failed.ok());
  BOOST_TEST((failed.error_kind() == ErrorKind::data), failed.error());
  BOOST_TEST(db->is_open());

  auto slow = db->query("SELECT pg_sleep(30)");
  BOOST_REQUIRE(!slow);
  BOOST_TEST((slow.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(slow.error().find("did not answer within 500 ms") != std::string::npos, slow.error());
  BOOST_TEST(db->gave_up_waiting());
  BOOST_TEST(!db->is_open());
  auto after = db->query("SELECT 1");
  BOOST_TEST(!after.ok());
  BOOST_TEST((after.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(!db->gave_up_waiting());  // failed at once: nothing was waited for

  auto piped = pg::Connection::open(uri, "", 500ms);
  BOOST_REQUIRE_MESSAGE(piped, piped.error());
  {
    auto pipeline = pg::Pipeline::begin(*piped);
    BOOST_REQUIRE(pipeline);
    BOOST_REQUIRE(pipeline->send("SELECT 1"));
    BOOST_REQUIRE(pipeline->send("SELECT pg_sleep(30)"));
    auto results = pipeline->finish();
    BOOST_REQUIRE(!results);
    BOOST_TEST((results.error_kind() == ErrorKind::unavailable), results.error());
  }
  BOOST_TEST(piped->gave_up_waiting());
  BOOST_TEST(!piped->is_open());

  // A reader (read_session.h) answers its next statement, on a new connection. (Opened from
  // a store::Database, the server cancels the statement at the same time, statement_timeout:
  // whichever comes first, the read fails as one to retry later.)
  BOOST_REQUIRE(store::connect_migrated({uri, ""}));  // readers need the schema
  store::Database bounded(uri);
  bounded.reply_timeout = 500ms;
  auto link = store::pgread::ReaderLink::open(bounded);
  BOOST_REQUIRE_MESSAGE(link, link.error());
  auto cut = link->query("SELECT pg_sleep(30)");
  BOOST_REQUIRE(!cut);
  BOOST_TEST((cut.error_kind() == ErrorKind::unavailable || cut.error_kind() == ErrorKind::busy), cut.error());
  auto next = link->query("SELECT 42");
  BOOST_REQUIRE_MESSAGE(next, next.error());
  BOOST_TEST(next->integer(0, 0) == 42);
}

// A server gone without a FIN (host off, address failed over) is found in about a minute,
// not the system's two hours of keepalive silence; the URI can say otherwise. The effective
// settings, as libpq holds them: dropping packets on loopback needs root and a firewall.
BOOST_AUTO_TEST_CASE(tcp_connections_probe_a_silent_server_unless_the_uri_says_otherwise) {
  const auto setting = [](pg::Connection& db, std::string_view key) {
    std::string value;
    PQconninfoOption* options = PQconninfo(db.get());
    for (PQconninfoOption* o = options; o && o->keyword; ++o) {
      if (key == o->keyword && o->val) value = o->val;
    }
    PQconninfoFree(options);
    return value;
  };
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto db = pg::Connection::open(uri);
  BOOST_REQUIRE_MESSAGE(db, db.error());
  BOOST_TEST(setting(*db, "keepalives_idle") == "30");
  BOOST_TEST(setting(*db, "keepalives_interval") == "10");
  BOOST_TEST(setting(*db, "keepalives_count") == "3");
  BOOST_TEST(setting(*db, "tcp_user_timeout") == "60000");
  BOOST_TEST(setting(*db, "connect_timeout") == "10");
  const char* joiner = uri.find('?') == std::string::npos ? "?" : "&";
  auto own = pg::Connection::open(uri + joiner + "keepalives_idle=120&tcp_user_timeout=0");
  BOOST_REQUIRE_MESSAGE(own, own.error());
  BOOST_TEST(setting(*own, "keepalives_idle") == "120");
  BOOST_TEST(setting(*own, "tcp_user_timeout") == "0");
  BOOST_TEST(setting(*own, "keepalives_count") == "3");
}

BOOST_AUTO_TEST_CASE(instances_starting_together_apply_each_migration_once) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  std::vector<std::string> errors(4);
  std::vector<std::thread> starting;
  for (size_t i = 0; i < errors.size(); ++i) {
    starting.emplace_back([&, i] {
      auto db = store::connect_migrated({uri, ""});
      if (!db) errors[i] = db.error();
    });
  }
  for (auto& t : starting) t.join();
  for (const auto& e : errors) BOOST_TEST(e.empty(), e);
  auto db = store::connect_migrated({uri, ""});
  BOOST_REQUIRE(db);
  BOOST_TEST(db->query_int("SELECT count(*) FROM schema_migrations")->value_or(0) == store::postgres_schema_version());
  BOOST_TEST(db->query_int("SELECT applied_seq FROM processor_state")->value_or(-1) == 0);
  BOOST_TEST(db->query_int("SELECT count(*) FROM information_schema.tables WHERE table_name = 'outbox'")->value_or(0) == 1);
}

BOOST_AUTO_TEST_CASE(a_schema_newer_than_this_binary_is_refused) {
  const std::string uri = test::PostgresCluster::shared().fresh_database();
  auto db = store::connect_migrated({uri, ""});
  BOOST_REQUIRE(db);
  BOOST_REQUIRE(db->exec("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"));
  auto again = store::connect_migrated({uri, ""});
  BOOST_REQUIRE(!again);
  BOOST_TEST(again.error().find("newer than this healthhook") != std::string::npos, again.error());
}

BOOST_AUTO_TEST_CASE(the_password_comes_from_beside_the_uri_and_a_wrong_one_is_refused_without_showing_it) {
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  const std::string uri = cluster.fresh_database();
  cluster.psql("postgres", "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'passworded') THEN "
                           "CREATE ROLE passworded LOGIN PASSWORD 'correct horse'; END IF; END $$");
  const std::string as_passworded = as_role(uri, "passworded");
  auto right = store::connect({as_passworded, "correct horse"});
  BOOST_TEST(right.ok(), right.error());
  auto wrong = store::connect({as_passworded, "battery staple"});
  BOOST_REQUIRE(!wrong);
  BOOST_TEST((wrong.error_kind() == ErrorKind::unavailable));
  BOOST_TEST(wrong.error().find("password authentication failed") != std::string::npos, wrong.error());
  BOOST_TEST(wrong.error().find("battery") == std::string::npos, wrong.error());
  auto none = store::connect({as_passworded, ""});
  BOOST_TEST(!none);
}

// A role that may use no schema on its search_path sees no table: said so, with the grant,
// not taken for an empty database (a reader) or shown as a failed CREATE (serve).
BOOST_AUTO_TEST_CASE(a_role_without_a_usable_schema_is_told_which_grant_it_needs) {
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  const std::string uri = cluster.fresh_database();
  BOOST_REQUIRE(store::connect_migrated({uri, ""}));
  ensure_role(cluster, "schemaless");
  cluster.psql(database_of(uri), "REVOKE ALL ON SCHEMA public FROM PUBLIC");
  const std::string as_schemaless = as_role(uri, "schemaless");
  auto refused = store::connect({as_schemaless, ""});
  BOOST_REQUIRE(!refused);
  BOOST_TEST(refused.error().find("role schemaless may use no schema") != std::string::npos, refused.error());
  BOOST_TEST(refused.error().find("GRANT USAGE ON SCHEMA public TO schemaless") != std::string::npos,
             refused.error());
  auto reader = store::open_read_store(store::Database{as_schemaless, ""});
  BOOST_REQUIRE(!reader);
  BOOST_TEST(reader.error().find("may use no schema") != std::string::npos, reader.error());
}

// libpq's "connection refused" comes with a second, tab-indented line ("Is the server
// running on that host…"): an error is one line, in the log and on a terminal.
BOOST_AUTO_TEST_CASE(a_server_that_is_not_there_is_one_line) {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  BOOST_REQUIRE(::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  BOOST_REQUIRE(::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const unsigned port = ntohs(address.sin_port);
  ::close(probe);  // nothing listens there now
  auto refused = store::connect({"postgresql://hh@127.0.0.1:" + std::to_string(port) + "/hh?connect_timeout=5", ""});
  BOOST_REQUIRE(!refused);
  BOOST_TEST(refused.error().find("cannot connect") != std::string::npos, refused.error());
  BOOST_TEST(refused.error().find_first_of("\n\t") == std::string::npos, refused.error());
}

// Least privilege: the owner migrated, serve's role has the rows but may not create tables.
// It runs (no DDL when nothing is pending); on a database not migrated yet it is told
// which grant it needs, not shown a failed CREATE TABLE.
BOOST_AUTO_TEST_CASE(a_role_that_may_not_create_runs_on_a_migrated_database) {
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  ensure_role(cluster, "rowsonly");
  const auto as_rowsonly = [](const std::string& uri) { return as_role(uri, "rowsonly"); };
  const char* grants = "REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT USAGE ON SCHEMA public TO rowsonly; "
                       "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO rowsonly; "
                       "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO rowsonly";
  const std::string migrated = cluster.fresh_database();
  BOOST_REQUIRE(store::connect_migrated({migrated, ""}));
  cluster.psql(database_of(migrated), grants);
  auto runs = store::connect_migrated({as_rowsonly(migrated), ""});
  BOOST_TEST(runs.ok(), (runs ? "" : runs.error()));

  const std::string empty = cluster.fresh_database();
  cluster.psql(database_of(empty), grants);
  auto refused = store::connect_migrated({as_rowsonly(empty), ""});
  BOOST_REQUIRE(!refused);
  BOOST_TEST(refused.error().find("role rowsonly may not create tables in schema public") != std::string::npos,
             refused.error());
  BOOST_TEST(refused.error().find("GRANT CREATE ON SCHEMA public TO rowsonly") != std::string::npos, refused.error());
  // check-config finds both as serve would, changing nothing (it said ok to the second).
  BOOST_TEST(store::check_postgres_store({as_rowsonly(migrated), ""}).ok());
  auto checked = store::check_postgres_store({as_rowsonly(empty), ""});
  BOOST_REQUIRE(!checked);
  BOOST_TEST(checked.error() == refused.error());
}

// /metrics' figures for a role that is no superuser and not in pg_monitor (the owner role
// docs/postgresql.md has one create): the sizes are read, the server's WAL size is 0. A
// CASE around pg_ls_waldir() failed the whole statement: PostgreSQL checks EXECUTE on
// every function when a statement starts, taken branch or not.
BOOST_AUTO_TEST_CASE(figures_are_read_by_a_role_that_may_not_list_the_wal) {
  test::PostgresCluster& cluster = test::PostgresCluster::shared();
  const std::string uri = cluster.fresh_database();
  BOOST_REQUIRE(store::connect_migrated({uri, ""}));
  ensure_role(cluster, "plainreader");
  cluster.psql(database_of(uri), "GRANT USAGE ON SCHEMA public TO plainreader; "
                                 "GRANT SELECT ON ALL TABLES IN SCHEMA public TO plainreader");
  const std::string as_plain = as_role(uri, "plainreader");
  auto figures = store::open_figures(store::Database{as_plain, ""});
  BOOST_REQUIRE_MESSAGE(figures, figures.error());
  auto sizes = (*figures)->sizes();
  BOOST_REQUIRE_MESSAGE(sizes, sizes.error());
  BOOST_TEST(sizes->database_bytes > 0);
  BOOST_TEST(sizes->log_bytes == 0);
  // The owner of the test cluster may list it.
  auto as_owner = store::open_figures(store::Database{uri, ""});
  BOOST_REQUIRE_MESSAGE(as_owner, as_owner.error());
  auto owner_sizes = (*as_owner)->sizes();
  BOOST_REQUIRE_MESSAGE(owner_sizes, owner_sizes.error());
  BOOST_TEST(owner_sizes->log_bytes > 0);
}

BOOST_AUTO_TEST_CASE(tls_to_the_database_when_the_uri_asks_for_it) {
  const fake::CertificateAuthority ca = fake::make_certificate_authority("healthhook test database CA");
  const fake::ServerCertificate server = fake::make_server_certificate(ca, {"localhost"}, {"127.0.0.1"});
  test::PostgresCluster cluster(test::PostgresTls{server.cert_pem, server.key_pem});
  test::TempDir dir;
  const std::string trusted = dir.write("ca.pem", ca.cert_pem);
  const std::string other = dir.write("other.pem", fake::make_certificate_authority("someone else").cert_pem);
  const std::string base = cluster.tcp_uri("postgres");

  auto verified = store::connect({base + "?sslmode=verify-full&sslrootcert=" + trusted, ""});
  BOOST_REQUIRE_MESSAGE(verified, verified.error());
  auto ssl = verified->query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  BOOST_REQUIRE_MESSAGE(ssl, ssl.error());
  BOOST_TEST(ssl->boolean(0, 0));
  // A server whose certificate this CA did not sign is refused; without TLS, the server
  // refuses (hostssl only).
  auto wrong_ca = store::connect({base + "?sslmode=verify-full&sslrootcert=" + other, ""});
  BOOST_TEST(!wrong_ca);
  BOOST_TEST(wrong_ca.error().find("certificate") != std::string::npos, wrong_ca.error());
  BOOST_TEST(!store::connect({base + "?sslmode=disable", ""}));
}

BOOST_AUTO_TEST_CASE(a_password_in_the_uri_is_told_apart_from_an_at_sign_elsewhere) {
  for (const char* with : {"postgresql://app:s3cret@db:5432/hh", "postgres://app:@db/hh",
                           "postgresql://db/hh?sslmode=require&password=s3cret", "postgresql:///hh?password=x"}) {
    BOOST_TEST(store::uri_holds_password(with), with);
  }
  for (const char* without : {"postgresql://app@db/hh", "postgresql://db:5432?sslrootcert=/etc/ca.pem&user=me@corp",
                              "postgresql:///hh?host=/run&user=app", "postgresql://db/hh?sslpassword=k",
                              "healthhook.db", "postgresql://db/h@sh"}) {
    BOOST_TEST(!store::uri_holds_password(without), without);
  }
}

BOOST_AUTO_TEST_CASE(a_location_shown_in_a_message_has_no_password) {
  BOOST_TEST(store::loggable_location("postgresql://app:s3cret@db.internal:5432/hh?sslmode=require") ==
             "postgresql://app:***@db.internal:5432/hh?sslmode=require");
  BOOST_TEST(store::loggable_location("postgresql:///hh?host=/run&password=s3cret&user=app") ==
             "postgresql:///hh?host=/run&password=***&user=app");
  BOOST_TEST(store::loggable_location("postgresql://app@db/hh") == "postgresql://app@db/hh");
  BOOST_TEST(store::loggable_location("/var/lib/healthhook/a:b@c.db") == "/var/lib/healthhook/a:b@c.db");
}

BOOST_AUTO_TEST_SUITE_END()
