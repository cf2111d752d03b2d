#pragma once
// Runs the real `healthhook` binary as a child process, the way a user runs it: with a
// config file in a temporary folder, a generated signing secret, listening on an ephemeral
// port of 127.0.0.1. Reads its JSON log lines from stderr; the "listening" line tells the
// port. The destructor kills what is still running.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace hh::test {

// Path of the healthhook binary under test (set by CMake).
std::string healthhook_binary();

struct ProcessResult {
  int exit_code = -1;  // -1 while running; 128+N when killed by signal N
  std::string stdout_text;
  std::string stderr_text;
};

// What the child process starts with besides its arguments (as a shell's ulimit and
// umask would set them): tests of limits the server must live within.
struct ProcessLimits {
  std::optional<uint64_t> max_open_files;  // RLIMIT_NOFILE, soft and hard
  std::optional<mode_t> umask;
};

// "127.0.0.1:PORT" for a configuration that check-config judges and nothing serves. PORT
// lies below Linux's ephemeral range (32768-60999), from which every test server (it binds
// port 0) and every outbound connection takes its port: check-config's "is in use now" note
// then never joins the output at random (a CI run failed so on 53020). Suites run in
// parallel, so each passes its own port.
inline std::string unserved_listen_address(unsigned short port) { return "127.0.0.1:" + std::to_string(port); }

// Runs `healthhook args…` to completion (for command-line tests); stdin from `input`.
ProcessResult run_healthhook(const std::vector<std::string>& args, const std::string& input = "",
                             const std::vector<std::string>& extra_env = {},
                             std::chrono::seconds timeout = std::chrono::seconds(120),
                             const ProcessLimits& limits = {});

// `healthhook args…` left running, for tests that stop a command where they choose (e.g.
// `rebuild --pause-after-steps N`, which says so on stderr and waits): its stderr is read
// line by line; kill_hard() ends it as kill -9 does. The destructor kills what still runs.
class RunningCommand {
 public:
  explicit RunningCommand(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {});
  ~RunningCommand();
  RunningCommand(const RunningCommand&) = delete;
  RunningCommand& operator=(const RunningCommand&) = delete;

  // Waits until a line of its stderr contains `needle`; false on timeout or when the
  // command ended first.
  bool wait_for_line(const std::string& needle, std::chrono::milliseconds timeout) const;
  // SIGKILL, then its exit status (128 + 9 unless it had ended by itself).
  int kill_hard();
  pid_t pid() const { return pid_; }
  void signal(int signo) const;
  // Waits for it to end by itself: its exit status (128+N if killed by signal N), or -1
  // when it still runs after `timeout`.
  int wait(std::chrono::milliseconds timeout);
  // Its stderr so far, lines joined with '\n'.
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::string> lines_;  // GUARDED_BY(mutex_); "<eof>" last once stderr closed
};

class ServerProcess {
 public:
  // Writes healthhook.toml (listen 127.0.0.1:0, database, secret file) into `dir`, plus
  // any `extra_toml` lines, and starts `healthhook serve --config …`. Throws when the server
  // does not log "listening" within `startup_timeout`.
  ServerProcess(const TempDir& dir, const std::string& extra_toml = "",
                std::chrono::seconds startup_timeout = std::chrono::seconds(20),
                const std::vector<std::string>& extra_env = {}, const ProcessLimits& limits = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  unsigned short port() const { return port_; }
  const std::string& secret() const { return secret_; }
  const std::string& database() const { return database_; }
  const std::string& config_file() const { return config_file_; }
  pid_t pid() const { return pid_; }

  void signal(int signo) const;
  // Sends SIGTERM and waits for exit; returns the exit code (128+N if killed by signal N).
  int stop(std::chrono::seconds timeout = std::chrono::seconds(30));
  // SIGKILL, no chance to clean up (crash tests).
  void kill_hard();
  // Waits for exit without signalling.
  int wait(std::chrono::seconds timeout);
  // Restarts with the same folder, config and database (after stop()/kill_hard()).
  void restart(std::chrono::seconds startup_timeout = std::chrono::seconds(20));

  // Log lines read so far (stderr).
  std::vector<std::string> log_lines() const;
  // Waits until a log line contains `needle`; false on timeout.
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) const;

 private:
  void spawn(std::chrono::seconds startup_timeout);
  void reap(bool block);

  std::vector<std::string> extra_env_;
  ProcessLimits limits_;
  std::string secret_;
  std::string database_;
  std::string config_file_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  unsigned short port_ = 0;
  int stderr_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::string> lines_;  // GUARDED_BY(mutex_)
};

}  // namespace hh::test
