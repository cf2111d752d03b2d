#include "tests/support/server_process.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace hh::test {
namespace {

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// fork + exec with stdin/stdout/stderr wired to the given fds (-1: /dev/null).
pid_t spawn_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, int in_fd,
                    int out_fd, int err_fd, const ProcessLimits& limits = {}) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> args, env;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(in_fd >= 0 ? in_fd : devnull, 0);
    ::dup2(out_fd >= 0 ? out_fd : devnull, 1);
    ::dup2(err_fd >= 0 ? err_fd : devnull, 2);
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    if (limits.max_open_files) {
      const rlimit nofile{static_cast<rlim_t>(*limits.max_open_files), static_cast<rlim_t>(*limits.max_open_files)};
      if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0) ::_exit(126);
    }
    if (limits.umask) ::umask(*limits.umask);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

std::string healthhook_binary() { return HEALTHHOOK_BINARY; }

ProcessResult run_healthhook(const std::vector<std::string>& args, const std::string& input,
                             const std::vector<std::string>& extra_env, std::chrono::seconds timeout,
                             const ProcessLimits& limits) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe(in_pipe) || ::pipe(out_pipe) || ::pipe(err_pipe)) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv{healthhook_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = spawn_process(argv, extra_env, in_pipe[0], out_pipe[1], err_pipe[1], limits);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  // Feed stdin and drain stdout/stderr together so neither side blocks.
  ProcessResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
    ::poll(fds, in_fd >= 0 ? 3 : 2, 100);
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? result.stdout_text : result.stderr_text).append(buf, static_cast<size_t>(n));
      }
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = decode_status(status);
  return result;
}

RunningCommand::RunningCommand(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  int err_pipe[2];
  if (::pipe(err_pipe)) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv{healthhook_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = spawn_process(argv, extra_env, -1, -1, err_pipe[1]);
  ::close(err_pipe[1]);
  reader_ = std::thread([this, fd = err_pipe[0]] {
    std::string pending;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        std::lock_guard lock(mutex_);
        lines_.push_back(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        changed_.notify_all();
      }
    }
    ::close(fd);
    std::lock_guard lock(mutex_);
    if (!pending.empty()) lines_.push_back(pending);
    lines_.push_back("<eof>");
    changed_.notify_all();
  });
}

RunningCommand::~RunningCommand() { kill_hard(); }

bool RunningCommand::wait_for_line(const std::string& needle, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  bool found = false;
  changed_.wait_for(lock, timeout, [&] {
    for (const auto& line : lines_) {
      if (line.find(needle) != std::string::npos) found = true;
    }
    return found || (!lines_.empty() && lines_.back() == "<eof>");
  });
  return found;
}

int RunningCommand::kill_hard() {
  if (pid_ > 0 && exit_code_ < 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    if (::waitpid(pid_, &status, 0) == pid_) exit_code_ = decode_status(status);
  }
  if (reader_.joinable()) reader_.join();
  return exit_code_;
}

void RunningCommand::signal(int signo) const {
  if (pid_ > 0 && exit_code_ < 0) ::kill(pid_, signo);
}

int RunningCommand::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0 && exit_code_ < 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = decode_status(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (reader_.joinable()) reader_.join();
  return exit_code_;
}

std::string RunningCommand::stderr_text() const {
  std::lock_guard lock(mutex_);
  std::string text;
  for (const auto& line : lines_) {
    if (line == "<eof>") continue;
    if (!text.empty()) text += '\n';
    text += line;
  }
  return text;
}

ServerProcess::ServerProcess(const TempDir& dir, const std::string& extra_toml, std::chrono::seconds startup_timeout,
                             const std::vector<std::string>& extra_env, const ProcessLimits& limits)
    : extra_env_(extra_env),
      limits_(limits),
      secret_(random_secret()),
      database_(dir.file("healthhook.db")) {
  dir.write("secret", secret_ + "\n");
  config_file_ = dir.write("healthhook.toml", "listen = \"127.0.0.1:0\"\n"
                                              "database = \"" + database_ + "\"\n"
                                              "signing_secret_files = [\"secret\"]\n" + extra_toml + "\n");
  spawn(startup_timeout);
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && exit_code_ < 0) kill_hard();
  if (reader_.joinable()) reader_.join();
}

void ServerProcess::spawn(std::chrono::seconds startup_timeout) {
  int err_pipe[2];
  if (::pipe(err_pipe)) throw std::runtime_error("pipe failed");
  pid_ = spawn_process({healthhook_binary(), "serve", "--config", config_file_}, extra_env_, -1, -1, err_pipe[1],
                       limits_);
  ::close(err_pipe[1]);
  stderr_fd_ = err_pipe[0];
  exit_code_ = -1;
  port_ = 0;
  {
    std::lock_guard lock(mutex_);
    lines_.clear();
  }
  reader_ = std::thread([this, fd = stderr_fd_] {
    std::string pending;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        std::lock_guard lock(mutex_);
        lines_.push_back(pending.substr(0, nl));
        pending.erase(0, nl + 1);
        changed_.notify_all();
      }
    }
    ::close(fd);
    std::lock_guard lock(mutex_);
    if (!pending.empty()) lines_.push_back(pending);
    lines_.push_back("<eof>");
    changed_.notify_all();
  });

  // The "listening" line carries the address; the port follows the last ':'.
  std::unique_lock lock(mutex_);
  const bool listening = changed_.wait_for(lock, startup_timeout, [&] {
    for (const auto& line : lines_) {
      if (line.find("\"event\":\"listening\"") != std::string::npos || line == "<eof>") return true;
    }
    return false;
  });
  for (const auto& line : lines_) {
    if (line.find("\"event\":\"listening\"") == std::string::npos) continue;
    const auto key = line.find("\"address\":\"");
    const auto end = line.find('"', key + 11);
    const std::string address = line.substr(key + 11, end - key - 11);
    port_ = static_cast<unsigned short>(std::stoi(address.substr(address.rfind(':') + 1)));
  }
  if (!listening || port_ == 0) {
    std::string log;
    for (const auto& line : lines_) log += line + "\n";
    lock.unlock();
    kill_hard();
    throw std::runtime_error("healthhook serve did not start:\n" + log);
  }
}

void ServerProcess::signal(int signo) const {
  if (pid_ > 0 && exit_code_ < 0) ::kill(pid_, signo);
}

void ServerProcess::reap(bool block) {
  if (pid_ <= 0 || exit_code_ >= 0) return;
  int status = 0;
  if (::waitpid(pid_, &status, block ? 0 : WNOHANG) == pid_) exit_code_ = decode_status(status);
}

int ServerProcess::wait(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (exit_code_ < 0 && std::chrono::steady_clock::now() < deadline) {
    reap(false);
    if (exit_code_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (exit_code_ >= 0 && reader_.joinable()) reader_.join();
  return exit_code_;
}

int ServerProcess::stop(std::chrono::seconds timeout) {
  signal(SIGTERM);
  const int code = wait(timeout);
  if (code < 0) {
    // A serve that does not stop is a hang to find: what it logged last and, where gdb is
    // installed, where each of its threads waits, before it is killed.
    std::fprintf(stderr, "serve (pid %d) still runs %lld s after SIGTERM; its last log lines:\n", static_cast<int>(pid_),
                 static_cast<long long>(timeout.count()));
    const auto lines = log_lines();
    for (size_t i = lines.size() > 30 ? lines.size() - 30 : 0; i < lines.size(); ++i) {
      std::fprintf(stderr, "  %s\n", lines[i].c_str());
    }
    if (::access("/usr/bin/gdb", X_OK) == 0) {
      const std::string command =
          "/usr/bin/gdb -batch -p " + std::to_string(pid_) + " -ex 'thread apply all bt' 1>&2 2>/dev/null";
      [[maybe_unused]] const int ignored = std::system(command.c_str());
    }
    kill_hard();
  }
  return code;
}

void ServerProcess::kill_hard() {
  if (pid_ > 0 && exit_code_ < 0) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  if (reader_.joinable()) reader_.join();
}

void ServerProcess::restart(std::chrono::seconds startup_timeout) {
  if (exit_code_ < 0) kill_hard();
  if (reader_.joinable()) reader_.join();
  spawn(startup_timeout);
}

std::vector<std::string> ServerProcess::log_lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

bool ServerProcess::wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    for (const auto& line : lines_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  });
}

}  // namespace hh::test
