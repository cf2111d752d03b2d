#include "tests/support/postgres_cluster.h"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hh::test {
namespace fs = std::filesystem;

namespace {

std::string find_bindir() {
  if (const char* dir = std::getenv("HEALTHHOOK_PG_BINDIR"); dir && *dir) return std::string(dir) + "/";
  std::error_code ec;
  std::string best;
  int best_version = 0;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version && fs::exists(entry.path() / "bin" / "pg_ctl")) {
      best_version = version;
      best = (entry.path() / "bin").string() + "/";
    }
  }
  return best;  // "": from $PATH
}

// Runs a shell command, returning its standard output; throws with `what` on failure.
std::string capture(const std::string& command, const std::string& what) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error(what + ": popen failed");
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error(what + " failed: " + output);
  return output;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A port number of our own: with no TCP listener it only names the socket file, but
// clusters of several test processes in one folder tree must not share a lock file name.
int pick_port() { return 20000 + static_cast<int>(::getpid() % 20000); }

}  // namespace

PostgresCluster& PostgresCluster::shared() {
  static PostgresCluster cluster;
  return cluster;
}

PostgresCluster::PostgresCluster() : bin_(find_bindir()), port_(pick_port()) {
  static int started_in_process = 0;
  port_ += started_in_process++ * 7;
  if (::geteuid() == 0) {
    const passwd* owner = ::getpwnam("postgres");
    if (!owner) throw std::runtime_error("PostgreSQL tests as root need the `postgres` user (package postgresql)");
    if (::chown(dir_.path().c_str(), owner->pw_uid, owner->pw_gid) != 0) {
      throw std::runtime_error("chown of the cluster folder failed");
    }
  }
  run_as_owner(bin_ + "initdb -D " + quoted(dir_.file("data")) +
               " -A trust -U healthhook -E UTF8 --locale=C --no-sync > " + quoted(dir_.file("initdb.log")));
  // Every user in without a password, except `passworded` (tests of password files).
  run_as_owner("printf 'local all passworded scram-sha-256\\nlocal all all trust\\n' > " +
               quoted(dir_.file("data/pg_hba.conf")));
  start();
}

PostgresCluster::~PostgresCluster() {
  if (running_) {
    try {
      run_as_owner(bin_ + "pg_ctl -D " + quoted(dir_.file("data")) + " -m immediate -w stop > /dev/null");
    } catch (const std::exception&) {
      // The folder goes either way; a server left running has lost its files.
    }
  }
}

std::string PostgresCluster::run_as_owner(const std::string& command) const {
  const std::string shell = "sh -c " + quoted(command);
  return capture(::geteuid() == 0 ? "runuser -u postgres -- " + shell : shell, "postgres command");
}

void PostgresCluster::start() {
  // fsync off: a test server's files die with its folder; the durability that matters
  // (synchronous_commit, commit before ack) is the same protocol either way.
  const std::string options = "-k " + dir_.path().string() + " -c listen_addresses='' -c fsync=off -c full_page_writes=off -p " +
                              std::to_string(port_) + " -c max_connections=200";
  try {
    run_as_owner(bin_ + "pg_ctl -D " + quoted(dir_.file("data")) + " -w -t 60 -l " + quoted(dir_.file("server.log")) +
                 " -o " + quoted(options) + " start > /dev/null");
  } catch (const std::exception& error) {
    std::ifstream log(dir_.file("server.log"));
    std::stringstream text;
    text << log.rdbuf();
    throw std::runtime_error(std::string(error.what()) + "\nserver log:\n" + text.str());
  }
  running_ = true;
}

void PostgresCluster::stop() {
  run_as_owner(bin_ + "pg_ctl -D " + quoted(dir_.file("data")) + " -m immediate -w stop > /dev/null");
  running_ = false;
}

std::string PostgresCluster::uri(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_.path().string() + "&port=" + std::to_string(port_) +
         "&user=healthhook";
}

std::string PostgresCluster::psql(const std::string& database, const std::string& sql) const {
  return capture(bin_ + "psql -X -At -v ON_ERROR_STOP=1 " + quoted(uri(database)) + " -c " + quoted(sql), "psql");
}

std::string PostgresCluster::fresh_database() {
  const std::string name = "t" + std::to_string(++databases_);
  psql("postgres", "CREATE DATABASE " + name);
  return uri(name);
}

}  // namespace hh::test
