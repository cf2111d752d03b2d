#pragma once
// A backend that answers with raw bytes, for the lies an HTTP server library would not tell:
// interim 1xx answers before the final one, a Content-Length it never sends, a body that
// never ends, two answers to one request, a connection it never reads from or hangs up on
// half way through the request, a redirect to another host. Plain TCP on 127.0.0.1, a
// thread per connection running the test's Script; signatures are not checked (the
// FakeBackend of fake_backend.h does that).
//
// A Script gets the connection as a Link: read_request() reads one whole request (the
// header, then Content-Length bytes of body) and records it in requests(); read_bytes()
// reads raw bytes without recording; write() sends bytes as they are; wait() sleeps, cut
// short by stop(). When the Script returns the connection is closed.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hh::test {

struct ScriptedRequest {
  std::string id;      // webhook-id
  std::string head;    // request line and headers, as received
  std::string body;
  uint64_t connection = 0;  // which accepted connection (1, 2, …)
  size_t on_connection = 0;  // how many requests that connection read before (0: the first)
};

class ScriptedBackend {
 public:
  class Link {
   public:
    // One whole request; none when the client closed the connection or stop() was called.
    std::optional<ScriptedRequest> read_request();
    // Up to `n` raw bytes (fewer when the client closes); "" at the end.
    std::string read_bytes(size_t n);
    // False when the client is gone.
    bool write(std::string_view bytes);
    // Sleeps `how_long`, or until stop(); false when stopped.
    bool wait(std::chrono::milliseconds how_long);
    // Waits until the client closes the connection (or stop()), discarding what it sends.
    void wait_for_close();
    uint64_t connection() const { return connection_; }
    bool stopping() const;

    // Made by the backend for each connection.
    struct Shared;
    Link(int fd, uint64_t connection, std::shared_ptr<Shared> shared)
        : fd_(fd), connection_(connection), shared_(std::move(shared)) {}

   private:
    int fd_;
    uint64_t connection_;
    size_t requests_ = 0;
    std::string buffered_;
    std::shared_ptr<Shared> shared_;
  };
  using Script = std::function<void(Link&)>;

  explicit ScriptedBackend(Script script);
  ~ScriptedBackend();  // stop()
  ScriptedBackend(const ScriptedBackend&) = delete;
  ScriptedBackend& operator=(const ScriptedBackend&) = delete;

  // Closes the listener and every connection, cuts waits short and joins the threads.
  void stop();

  uint16_t port() const;
  std::string url() const;  // http://127.0.0.1:PORT/hooks
  std::vector<ScriptedRequest> requests() const;
  size_t connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hh::test
