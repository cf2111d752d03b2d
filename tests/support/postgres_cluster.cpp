#include "tests/support/postgres_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>
#include <stdexcept>
#include <string>
#include <vector>

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

// A free TCP port of 127.0.0.1 (without TLS the port only names the socket file).
int pick_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) ::close(fd);
  if (port == 0) throw std::runtime_error("no free port for the test PostgreSQL server");
  return port;
}

void write_owned(const std::string& path, const std::string& content, const passwd* owner) {
  {
    std::ofstream out(path, std::ios::binary);
    out << content;
  }
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  if (owner && ::chown(path.c_str(), owner->pw_uid, owner->pw_gid) != 0) {
    throw std::runtime_error("chown of " + path + " failed");
  }
}

}  // namespace

PostgresCluster& PostgresCluster::shared() {
  static PostgresCluster cluster;
  return cluster;
}

PostgresCluster::PostgresCluster(std::optional<PostgresTls> tls)
    : bin_(find_bindir()), tls_(std::move(tls)), port_(pick_port()) {
  const passwd* owner = nullptr;
  if (::geteuid() == 0) {
    owner = ::getpwnam("postgres");
    if (!owner) throw std::runtime_error("PostgreSQL tests as root need the `postgres` user (package postgresql)");
    if (::chown(dir_.path().c_str(), owner->pw_uid, owner->pw_gid) != 0) {
      throw std::runtime_error("chown of the cluster folder failed");
    }
  }
  run_as_owner(bin_ + "initdb -D " + quoted(dir_.file("data")) +
               " -A trust -U healthhook -E UTF8 --locale=C --no-sync > " + quoted(dir_.file("initdb.log")));
  // Every user in without a password, except `passworded` (tests of password files); over
  // TCP, TLS only.
  write_owned(dir_.file("data/pg_hba.conf"),
              "local all passworded scram-sha-256\nlocal all all trust\nhostssl all all 127.0.0.1/32 trust\n", owner);
  if (tls_) {
    write_owned(dir_.file("server.crt"), tls_->cert_pem, owner);
    write_owned(dir_.file("server.key"), tls_->key_pem, owner);
  }
  start();
}

PostgresCluster::~PostgresCluster() {
  if (server_ > 0) stop();
}

std::string PostgresCluster::run_as_owner(const std::string& command) const {
  const std::string shell = "sh -c " + quoted(command);
  return capture(::geteuid() == 0 ? "runuser -u postgres -- " + shell : shell, "postgres command");
}

void PostgresCluster::start() {
  const std::string program = bin_.empty() ? "postgres" : bin_ + "postgres";
  // fsync off: a test server's files die with its folder; the durability that matters
  // (synchronous_commit, commit before ack) is the same protocol either way.
  std::vector<std::string> args = {program, "-D", dir_.file("data"), "-k", dir_.path().string(),
                                   "-p", std::to_string(port_), "-c", "fsync=off", "-c", "full_page_writes=off",
                                   "-c", "max_connections=200"};
  if (tls_) {
    const std::vector<std::string> settings = {"listen_addresses=127.0.0.1", "ssl=on",
                                               "ssl_cert_file=" + dir_.file("server.crt"),
                                               "ssl_key_file=" + dir_.file("server.key")};
    for (const std::string& setting : settings) {
      args.push_back("-c");
      args.push_back(setting);
    }
  } else {
    args.push_back("-c");
    args.push_back("listen_addresses=");
  }
  const passwd* owner = ::geteuid() == 0 ? ::getpwnam("postgres") : nullptr;
  const int log = ::open(dir_.file("server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  std::vector<char*> argv;  // built before fork(): the child only calls what is safe there
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    if (owner && (::setgid(owner->pw_gid) != 0 || ::setuid(owner->pw_uid) != 0)) ::_exit(126);
    // After setuid (which clears it): the server gets SIGQUIT, an immediate shutdown, when
    // the test process dies, however it dies.
    ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (::getppid() != parent) ::_exit(0);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(log);
  server_ = child;
  wait_until_ready();
}

void PostgresCluster::wait_until_ready() {
  // postmaster.pid's eighth line says "ready" once the server accepts connections.
  for (int attempt = 0; attempt < 600; ++attempt) {
    int status = 0;
    if (::waitpid(server_, &status, WNOHANG) == server_) {
      server_ = -1;
      break;
    }
    std::ifstream pid_file(dir_.file("data/postmaster.pid"));
    std::string line;
    for (int n = 0; n < 8 && std::getline(pid_file, line); ++n) {
    }
    if (line.find("ready") != std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::ifstream log(dir_.file("server.log"));
  std::stringstream text;
  text << log.rdbuf();
  throw std::runtime_error("the test PostgreSQL server did not start\nserver log:\n" + text.str());
}

void PostgresCluster::stop() {
  if (server_ <= 0) return;
  ::kill(server_, SIGQUIT);  // immediate shutdown, as pg_ctl -m immediate: a crash
  int status = 0;
  ::waitpid(server_, &status, 0);
  server_ = -1;
}

void PostgresCluster::signal_all(int signo) const {
  if (server_ <= 0) return;
  // The postmaster first when stopping (it forks no backend after that), last when resuming.
  if (signo != SIGCONT) ::kill(server_, signo);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const size_t after_comm = line.rfind(')');
    if (after_comm == std::string::npos) continue;
    std::istringstream fields(line.substr(after_comm + 1));
    std::string state;
    pid_t parent = 0;
    fields >> state >> parent;
    if (parent == server_) ::kill(static_cast<pid_t>(std::stol(name)), signo);
  }
  if (signo == SIGCONT) ::kill(server_, signo);
}

std::string PostgresCluster::uri(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_.path().string() + "&port=" + std::to_string(port_) +
         "&user=healthhook";
}

std::string PostgresCluster::tcp_uri(const std::string& database) const {
  return "postgresql://healthhook@127.0.0.1:" + std::to_string(port_) + "/" + database;
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
