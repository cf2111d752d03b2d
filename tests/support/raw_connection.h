#pragma once
// A plain TCP connection to 127.0.0.1 for tests that play a hostile client: many idle
// sockets, a slow sender, a client from another loopback address (127.0.0.2, …: Linux
// routes all of 127/8 to lo). Blocking POSIX calls with timeouts; never throws after
// construction.
#include <sys/types.h>

#include <chrono>
#include <string>

namespace hh::test {

class RawConnection {
 public:
  // Connects from `source` (any port) to 127.0.0.1:`port`; connected() tells.
  explicit RawConnection(unsigned short port, const std::string& source = "127.0.0.1");
  ~RawConnection();
  RawConnection(RawConnection&& other) noexcept;
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // False when the peer closed or reset the connection (or the send timed out).
  bool send(const std::string& bytes, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // What arrives until the server closes the connection or `timeout` passes.
  std::string receive(std::chrono::milliseconds timeout);
  // One HTTP response (head, then a Content-Length body), for a connection kept alive;
  // what arrived when the server closed or `timeout` passed first (maybe "").
  std::string receive_response(std::chrono::milliseconds timeout);
  // True when the server closed (or reset) the connection within `timeout` (0: has it).
  bool closed_by_server(std::chrono::milliseconds timeout);
  void close();

 private:
  int fd_ = -1;
};

// Of a running process: peak resident memory (VmHWM) and CPU time (user + system).
uint64_t peak_rss_kib(pid_t pid);
std::chrono::milliseconds cpu_time(pid_t pid);
// Resets VmHWM to the current resident size (Linux: write "5" to /proc/PID/clear_refs).
void reset_peak_rss(pid_t pid);

}  // namespace hh::test
