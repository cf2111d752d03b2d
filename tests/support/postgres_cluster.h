#pragma once
// A throw-away PostgreSQL server for tests (spec §9): initdb into a temporary folder, the
// server on a Unix socket in that folder only (no TCP listener unless TLS is asked for),
// stopped and removed afterwards. Started as the `postgres` user when the tests run as
// root (initdb refuses root), as CI does. Each test takes a database of its own
// (fresh_database()), so tests share one server per test process and start in
// milliseconds.
//
// The server is a child of the test process that dies with it (PR_SET_PDEATHSIG: a test
// killed by its timeout leaves no server behind). Create clusters on the test's main
// thread: the signal follows the thread that started the server.
//
// The binaries: $HEALTHHOOK_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin (Debian's
// `postgresql` package, which scripts/install-deps --for-tests installs), else $PATH.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "tests/support/temp_dir.h"

namespace hh::test {

// TLS to the server: it listens on 127.0.0.1 too (hostssl only), with this certificate.
struct PostgresTls {
  std::string cert_pem;
  std::string key_pem;
};

class PostgresCluster {
 public:
  // The process's server, started on first use (a failure to start throws with the
  // server's log), stopped when the process exits.
  static PostgresCluster& shared();

  // A started server of its own (tests that stop or kill it, or need TLS).
  explicit PostgresCluster(std::optional<PostgresTls> tls = std::nullopt);
  ~PostgresCluster();
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

  // Creates an empty database and returns its URI (user `healthhook`, no password; a role
  // named `passworded` must give its password).
  std::string fresh_database();
  std::string uri(const std::string& database) const;
  // With TLS: the database over TCP on 127.0.0.1 (add sslmode, sslrootcert).
  std::string tcp_uri(const std::string& database) const;

  // Stops the server at once, as a crash would (SIGQUIT: immediate shutdown), and starts it
  // again.
  void stop();
  void start();
  // Sends `signo` to the server and every process it started (backends, background
  // workers): SIGSTOP freezes the whole server, as a paused VM or a hung host would (it
  // accepts connections into the socket's backlog and answers nothing); SIGCONT resumes it.
  // A test that freezes it resumes it whatever happens (a scope guard), or the server, and
  // every later stop(), wait forever.
  void signal_all(int signo) const;

  // Runs SQL as the superuser in `database` through psql and returns its output (-At).
  std::string psql(const std::string& database, const std::string& sql) const;

 private:
  std::string run_as_owner(const std::string& command) const;
  void wait_until_ready();
  TempDir dir_;
  std::string bin_;
  std::optional<PostgresTls> tls_;
  int port_ = 0;
  int databases_ = 0;
  pid_t server_ = -1;
};

}  // namespace hh::test
