#pragma once
// What the load generator reads about the server while it runs: memory and open file
// descriptors from /proc (Linux), and the processor's lag from the database file.
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace hh::bench {

// A /proc/PID/status field in KiB ("VmRSS", "VmHWM"); -1 when the process is gone.
int64_t read_status_kib(int pid, const char* field);

// CPU time the process has used so far, user + system (ms); -1 when the process is gone.
// Per delivery, this barely moves with a neighbour's load, unlike a rate: the figure to
// compare builds by.
int64_t read_cpu_ms(int pid);

// Entries in /proc/PID/fd; -1 when unreadable.
int64_t count_open_fds(int pid);

struct ProcessorLag {
  int64_t deliveries = -1;  // inbox rows not yet applied; -1: could not read
  double seconds = -1;      // age of the oldest unapplied delivery; 0 when caught up
  int64_t last_seq = 0;     // newest inbox row
};

// A read-only connection to the server's database for sampling the processor's lag.
class LagProbe {
 public:
  LagProbe() = default;
  ~LagProbe();
  LagProbe(const LagProbe&) = delete;
  LagProbe& operator=(const LagProbe&) = delete;

  // False (with a message on stderr) when the file cannot be opened.
  bool open(const std::string& path);
  bool is_open() const { return db_ != nullptr; }
  ProcessorLag sample();

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace hh::bench
